package hub

import "context"

// Services are the hub's services over one core, each built with the
// others it needs: the one place where the domain is wired. internal/app
// builds them once and hands each adapter (the gRPC handlers, the
// orchestrator, the dashboard) what it uses.
type Services struct {
	Core         *Core
	Agents       *Agents
	Messages     *Messages
	Receipts     *Receipts
	Waits        *Waits
	Liveness     *Liveness
	Schedule     *Schedule
	Nudges       *Nudges
	Reservations *Reservations
	Projects     *Projects
	Injections   *Injections
	Ops          *Ops
	Tasks        *Tasks
	Inbox        *Inbox
	People       *People
	Webhooks     *Webhooks
	Usage        *Usage
	Budgets      *Budgets
}

// NewServices builds the services over c. Call Init before serving.
func NewServices(c *Core) *Services {
	receipts := NewReceipts(c)
	liveness := NewLiveness(c)
	messages := NewMessages(c, receipts)
	reservations := NewReservations(c)
	tasks := NewTasks(c, reservations)
	inbox := NewInbox(c, InboxOptions{})
	budgets := NewBudgets(c, inbox)
	return &Services{
		Core:         c,
		Agents:       NewAgents(c),
		Messages:     messages,
		Receipts:     receipts,
		Waits:        NewWaits(c, liveness, receipts),
		Liveness:     liveness,
		Schedule:     NewSchedule(c, messages),
		Nudges:       NewNudges(c, liveness),
		Reservations: reservations,
		Projects:     NewProjects(c),
		Injections:   NewInjections(c, receipts),
		Ops:          NewOps(c),
		Tasks:        tasks,
		Inbox:        inbox,
		People:       NewPeople(c),
		Webhooks:     NewWebhooks(c),
		Usage:        NewUsage(c, budgets, liveness),
		Budgets:      budgets,
	}
}

// Init loads what the services keep in memory from the store: agents'
// presence, and the newest message, from which the fallback watcher
// starts.
func (s *Services) Init(ctx context.Context) error {
	if err := s.Core.Init(ctx); err != nil {
		return err
	}
	return s.Waits.Init(ctx)
}
