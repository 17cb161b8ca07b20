package hub

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// BudgetTx stores budgets (budget.go) and sums what they count.
type BudgetTx interface {
	// PutBudget inserts b, or replaces the budget of its agent (AgentID
	// set) or its project.
	PutBudget(b *Budget) error
	// BudgetsOf returns the budget of agentID and the budget of project
	// (agentID 0 or project "": none of that kind), those that exist, the
	// agent's first, its name filled.
	BudgetsOf(agentID int64, project string) ([]*Budget, error)
	// Budgets returns every budget: the projects' by name, then the
	// agents' by name, their names filled.
	Budgets() ([]*Budget, error)
	// DeleteBudget deletes the budget of agentID (of project when agentID
	// is 0) and reports whether there was one.
	DeleteBudget(agentID int64, project string) (bool, error)
	// DaySpend sums the day rollups at day of agentID (of every agent of
	// project when agentID is 0).
	DaySpend(agentID int64, project string, day time.Time) (UsageCounts, error)
	// BudgetHolds reports whether a budget of agentID or of project holds
	// on day (Budget.Holds): reached that day and not lifted.
	BudgetHolds(agentID int64, project string, day time.Time) (bool, error)
	// BudgetAgents returns the enabled agents of project (ProjectOr of
	// theirs), by name, their ID, name and project filled: the agents a
	// project's budget holds.
	BudgetAgents(project string) ([]*Agent, error)
	// AnyBudgets reports whether any budget exists at all.
	AnyBudgets() (bool, error)
}

// Event kinds of budgets, in the agent's timeline.
const (
	EventBudgetWarned  EventKind = "budget_warned"  // BudgetWarnAt of a limit spent
	EventBudgetReached EventKind = "budget_reached" // a limit reached: work stops
)

// Budgets is the service of budgets: people set them; usage recorded is
// held against them (Usage.Record calls check).
type Budgets struct {
	*core
	store txs[budgetsTx] // the store methods it uses
	inbox itemOpener
	none  noBudgets // that no budget exists, known in memory
}

// itemOpener announces inbox items just opened (satisfied by *Inbox).
type itemOpener interface {
	Opened(items ...*InboxItem)
}

// NewBudgets returns the budgets' service: items it opens are announced
// through inbox; a budget set or deleted wakes the parked next_task calls
// of its project at the commit.
func NewBudgets(c *Core, inbox itemOpener) *Budgets {
	return &Budgets{core: c.core, store: txsOf[budgetsTx](c.store), inbox: inbox}
}

// BudgetRequest names a budget, of an agent or of a project, and for a
// Set, its limits.
type BudgetRequest struct {
	Agent, Project string
	USDPerDay      float64
	TokensPerDay   int64
}

// BudgetStanding is a budget with what it counts today.
type BudgetStanding struct {
	Budget
	Day   time.Time   // the UTC day
	Spent UsageCounts // spent that day
}

// Budget states, as a person reads them.
const (
	BudgetStateOK      = "ok"      // under BudgetWarnAt
	BudgetStateWarned  = "warned"  // BudgetWarnAt or more
	BudgetStateReached = "reached" // its agents get no tasks
	BudgetStateLifted  = "lifted"  // off for the rest of the day
)

// State says where the budget stands today.
func (s *BudgetStanding) State() string {
	switch {
	case s.LiftedOn.Equal(s.Day):
		return BudgetStateLifted
	case s.Holds(s.Day):
		return BudgetStateReached
	case s.Used(s.Spent) >= BudgetWarnAt:
		return BudgetStateWarned
	}
	return BudgetStateOK
}

// budgetsTx is what budgets read and write in one transaction.
type budgetsTx interface {
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	// BudgetTx
	AnyBudgets() (bool, error)
	BudgetAgents(project string) ([]*Agent, error)
	Budgets() ([]*Budget, error)
	BudgetsOf(agentID int64, project string) ([]*Budget, error)
	DaySpend(agentID int64, project string, day time.Time) (UsageCounts, error)
	DeleteBudget(agentID int64, project string) (bool, error)
	PutBudget(b *Budget) error
	// ChangesTx
	Recording() *Changes
	// EventTx
	InsertEvent(e *Event) error
	// InboxTx
	InsertInboxItem(it *InboxItem) error
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
	// ProjectTx
	ProjectExists(name string) (bool, error)
	// UsageTx
	UsageReport(q UsageQuery) ([]UsageRow, error)
}

// scope checks req names one agent or one project and resolves it:
// the agent, or nil for a project's budget. Errors: EINVALID, ENOTFOUND.
func scopeOf(tx budgetsTx, req BudgetRequest) (*Agent, error) {
	switch {
	case req.Agent != "" && req.Project != "":
		return nil, Errorf(EINVALID, "a budget is of an agent or of a project, not both: give agent %q or project %q", req.Agent, req.Project)
	case req.Agent != "":
		return tx.AgentByName(req.Agent)
	case req.Project != "":
		return nil, requireProject(tx, req.Project)
	}
	return nil, Errorf(EINVALID, "name whose budget it is: give agent (one agent) or project (every agent of it together)")
}

// find returns the budget req names, nil when there is none.
func findBudget(tx budgetsTx, agent *Agent, project string) (*Budget, error) {
	var bs []*Budget
	var err error
	if agent != nil {
		bs, err = tx.BudgetsOf(agent.ID, "")
	} else {
		bs, err = tx.BudgetsOf(0, project)
	}
	if err != nil || len(bs) == 0 {
		return nil, err
	}
	return bs[0], nil
}

// Set sets the budget req names, by by, to its limits: a new budget, or
// new limits for one (a limit no longer reached today releases its
// agents; one already reached holds them at once, the inbox item naming
// the agent, or the project's agent that spent most today). Errors: EINVALID, ENOTFOUND (no such agent or project).
func (s *Budgets) Set(ctx context.Context, by string, req BudgetRequest) (*BudgetStanding, error) {
	if err := CheckBudgetLimits(req.USDPerDay, req.TokensPerDay); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	day := BudgetDay(now)
	var st *BudgetStanding
	var news budgetNews
	err := update(ctx, s.store, func(tx budgetsTx) error {
		agent, err := scopeOf(tx, req)
		if err != nil {
			return err
		}
		b, err := findBudget(tx, agent, req.Project)
		if err != nil {
			return err
		}
		if b == nil {
			b = &Budget{Project: req.Project}
			if agent != nil {
				b.AgentID, b.Agent, b.Project = agent.ID, agent.Name, ""
			}
		}
		project := req.Project
		if agent != nil {
			project = ProjectOr(agent.Project)
		}
		spent, err := tx.DaySpend(b.AgentID, b.Project, day)
		if err != nil {
			return err
		}
		nb := restandBudget(*b, req.USDPerDay, req.TokensPerDay, spent, day)
		nb.SetBy, nb.UpdatedAt = by, now
		// Limits already reached today hold at once, as the next report
		// would have found.
		if step, over := budgetStep(nb, spent, day); step == BudgetOver {
			named := agent
			if named == nil {
				if named, err = topSpender(tx, req.Project, day); err != nil {
					return err
				}
			}
			if named != nil {
				nb = over
				if news, err = s.reached(tx, named, &nb, spent, now); err != nil {
					return err
				}
			}
		}
		// Before the write: a check that knew of no budget reads again
		// from here on.
		s.none.forget()
		if err := tx.PutBudget(&nb); err != nil {
			return err
		}
		tx.Recording().TasksChanged(project)
		st = &BudgetStanding{Budget: nb, Day: day, Spent: spent}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Announce(news)
	return st, nil
}

// topSpender is the agent of project that spent most today (dollars, then
// tokens), nil when none spent anything: the agent a project's budget
// item names when the budget is set below what the project spent.
func topSpender(tx budgetsTx, project string, day time.Time) (*Agent, error) {
	rows, err := tx.UsageReport(UsageQuery{GroupBy: []UsageGroup{UsageByAgent, UsageByProject}, Since: day, Until: day.Add(24 * time.Hour), Days: true, Projects: []string{project}})
	if err != nil {
		return nil, err
	}
	var top *UsageRow
	for i := range rows {
		r := &rows[i]
		if r.Project != project {
			continue
		}
		if top == nil || r.Counts.CostUSD > top.Counts.CostUSD || r.Counts.CostUSD == top.Counts.CostUSD && r.Counts.Tokens() > top.Counts.Tokens() {
			top = r
		}
	}
	if top == nil {
		return nil, nil
	}
	return tx.AgentByName(top.Agent)
}

// List returns every budget who sees (nil: the admin, every one) with
// what it counts today: of the projects who sees and of their agents.
func (s *Budgets) List(ctx context.Context, who *Person) ([]*BudgetStanding, error) {
	day := BudgetDay(s.clock.Now())
	var out []*BudgetStanding
	err := view(ctx, s.store, func(tx budgetsTx) error {
		bs, err := tx.Budgets()
		if err != nil {
			return err
		}
		for _, b := range bs {
			if ok, err := budgetSeen(tx, who, b); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			spent, err := tx.DaySpend(b.AgentID, b.Project, day)
			if err != nil {
				return err
			}
			out = append(out, &BudgetStanding{Budget: *b, Day: day, Spent: spent})
		}
		return nil
	})
	return out, err
}

// budgetSeen reports whether who sees b: a project's budget in a project
// who sees, an agent's of an agent in one.
func budgetSeen(tx budgetsTx, who *Person, b *Budget) (bool, error) {
	if who.SeesAll() {
		return true, nil
	}
	if b.AgentID == 0 {
		return who.Sees(b.Project), nil
	}
	a, err := tx.AgentByID(b.AgentID)
	if err != nil {
		return false, err
	}
	return who.Sees(a.Project), nil
}

// Get returns the budget req names with what it counts today, for who
// (nil: the admin). Errors: EINVALID, ENOTFOUND (no such agent or
// project, or no budget), EPERMISSION (of a project who does not see).
func (s *Budgets) Get(ctx context.Context, who *Person, req BudgetRequest) (*BudgetStanding, error) {
	day := BudgetDay(s.clock.Now())
	var st *BudgetStanding
	err := view(ctx, s.store, func(tx budgetsTx) error {
		agent, err := scopeOf(tx, req)
		if err != nil {
			return err
		}
		project := req.Project
		if agent != nil {
			project = agent.Project
		}
		if err := CheckSees(who, project); err != nil {
			return err
		}
		b, err := findBudget(tx, agent, req.Project)
		if err != nil {
			return err
		}
		if b == nil {
			return noBudget(agent, req.Project)
		}
		spent, err := tx.DaySpend(b.AgentID, b.Project, day)
		st = &BudgetStanding{Budget: *b, Day: day, Spent: spent}
		return err
	})
	return st, err
}

func noBudget(agent *Agent, project string) error {
	if agent != nil {
		return Errorf(ENOTFOUND, "agent %s has no budget of its own: `hubctl budgets list` shows the budgets", agent.Name)
	}
	return Errorf(ENOTFOUND, "project %s has no budget: `hubctl budgets list` shows the budgets", project)
}

// Delete deletes the budget req names: its agents are bound by it no
// more. Errors: EINVALID, ENOTFOUND (no such agent or project, or no
// budget).
func (s *Budgets) Delete(ctx context.Context, req BudgetRequest) error {
	return update(ctx, s.store, func(tx budgetsTx) error {
		agent, err := scopeOf(tx, req)
		if err != nil {
			return err
		}
		var ok bool
		project := req.Project
		if agent != nil {
			project = ProjectOr(agent.Project)
			ok, err = tx.DeleteBudget(agent.ID, "")
		} else {
			ok, err = tx.DeleteBudget(0, req.Project)
		}
		if err == nil && !ok {
			err = noBudget(agent, req.Project)
		}
		tx.Recording().TasksChanged(project)
		return err
	})
}

// spendTx is what holding usage against budgets (CheckSpend) reads and
// writes, in the transaction that records the usage.
type spendTx interface {
	// BudgetTx
	AnyBudgets() (bool, error)
	BudgetAgents(project string) ([]*Agent, error)
	BudgetsOf(agentID int64, project string) ([]*Budget, error)
	DaySpend(agentID int64, project string, day time.Time) (UsageCounts, error)
	PutBudget(b *Budget) error
	// EventTx
	InsertEvent(e *Event) error
	// InboxTx
	InsertInboxItem(it *InboxItem) error
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
}

// budgetNews is what holding usage against budgets did, announced after
// the commit.
type budgetNews struct {
	items []*InboxItem // opened
}

// CheckSpend holds agent's usage, just recorded at now, against its budget
// and its project's: the notice at BudgetWarnAt, the inbox item and the
// stop at the limit (told to every agent the budget holds), each once a
// day. Only the budgets of the agent that reported are read: usage moves
// nothing else; while no budget exists at all (noBudgets), nothing is.
func (s *Budgets) CheckSpend(tx spendTx, agent *Agent, now time.Time) (budgetNews, error) {
	var news budgetNews
	if s.none.known(now) {
		return news, nil
	}
	gen := s.none.generation()
	bs, err := tx.BudgetsOf(agent.ID, ProjectOr(agent.Project))
	if err != nil {
		return news, err
	}
	if len(bs) == 0 {
		some, err := tx.AnyBudgets()
		if err == nil && !some {
			s.none.seen(gen, now)
		}
		return news, err
	}
	day := BudgetDay(now)
	for _, b := range bs {
		spent, err := tx.DaySpend(b.AgentID, b.Project, day)
		if err != nil {
			return news, err
		}
		step, nb := budgetStep(*b, spent, day)
		switch step {
		case BudgetQuiet:
			continue
		case BudgetWarn:
			if err := recordEvent(tx, agent.ID, EventBudgetWarned, fmt.Sprintf("budget of %s: %s", nb.Scope(), spentText(&nb, spent)), now); err != nil {
				return news, err
			}
			if err := s.tell(tx, agent, budgetWarnText(agent.Name, &nb, spent), now); err != nil {
				return news, err
			}
		case BudgetOver:
			n, err := s.reached(tx, agent, &nb, spent, now)
			if err != nil {
				return news, err
			}
			news.items = append(news.items, n.items...)
		}
		if err := tx.PutBudget(&nb); err != nil {
			return news, err
		}
	}
	return news, nil
}

// reached does what b reached on the day of now calls for, agent named as
// the one whose spend reached it: the inbox item, the event, and the stop
// told to every agent b holds (agent, or every enabled agent of b's
// project).
func (s *Budgets) reached(tx spendTx, agent *Agent, b *Budget, spent UsageCounts, now time.Time) (budgetNews, error) {
	var news budgetNews
	it := budgetItem(agent, b, spent, now)
	if err := tx.InsertInboxItem(it); err != nil {
		return news, err
	}
	it.AgentName = agent.Name
	news.items = append(news.items, it)
	if err := recordEvent(tx, agent.ID, EventBudgetReached, fmt.Sprintf("budget of %s reached: %s; inbox item %d", b.Scope(), spentText(b, spent), it.ID), now); err != nil {
		return news, err
	}
	held := []*Agent{agent}
	if b.AgentID == 0 {
		var err error
		if held, err = tx.BudgetAgents(b.Project); err != nil {
			return news, err
		}
	}
	for _, a := range held {
		if err := s.tell(tx, a, budgetStopText(a.Name, b, spent, it.ID), now); err != nil {
			return news, err
		}
	}
	return news, nil
}

// tell sends agent a notice from the hub.
func (s *Budgets) tell(tx spendTx, agent *Agent, text string, now time.Time) error {
	m, d, err := s.nudgeMessage(agent, text, now)
	if err != nil {
		return fmt.Errorf("budget notice to %s: %w", agent.Name, err)
	}
	return tx.InsertMessage(m, d)
}

// Announce tells, after the commit, what CheckSpend or Set did: the people's
// inbox shows the items (the agents' waits wake to their messages at the
// commit).
func (s *Budgets) Announce(news budgetNews) {
	if len(news.items) > 0 {
		s.inbox.Opened(news.items...)
	}
}

// answerBudget applies by's answer to budget item it, checked as
// decision (CheckAnswer): raise sets the limits given (the others kept),
// which must leave the budget unreached today; lift leaves it off for
// the rest of the UTC day. The agent is told, from by. It returns the
// project whose agents may look for tasks again, and the detail of the
// event. Errors: EINVALID (a raise still reached), EPRECONDITION (the
// budget is gone).
func answerBudget(tx budgetAnswerTx, it *InboxItem, decision string, a Answer, by string, now time.Time) (project, detail string, err error) {
	var b *Budget
	var bs []*Budget
	if it.CallKey == RememberAgent {
		bs, err = tx.BudgetsOf(it.AgentID, "")
	} else {
		bs, err = tx.BudgetsOf(0, it.Project)
	}
	if err != nil {
		return "", "", err
	}
	if len(bs) == 0 {
		return "", "", Errorf(EPRECONDITION, "inbox item %d: the budget it is about was deleted since: nothing holds the agents any more", it.ID)
	}
	b = bs[0]
	day := BudgetDay(now)
	spent, err := tx.DaySpend(b.AgentID, b.Project, day)
	if err != nil {
		return "", "", err
	}
	nb := *b
	var told string
	switch decision {
	case DecisionRaise:
		usd, tokens := b.USDPerDay, b.TokensPerDay
		if a.USDPerDay > 0 {
			usd = a.USDPerDay
		}
		if a.TokensPerDay > 0 {
			tokens = a.TokensPerDay
		}
		nb = restandBudget(nb, usd, tokens, spent, day)
		if nb.Used(spent) >= 1 {
			return "", "", Errorf(EINVALID, "inbox item %d: %s is still reached today (%s): raise above what is spent, or lift it for the day", it.ID, nb.Limits(), spentText(&nb, spent))
		}
		detail = fmt.Sprintf("budget of %s raised to %s by %s", nb.Scope(), nb.Limits(), by)
		told = fmt.Sprintf("%s raised the budget of %s to %s (spent today: %s): you may take work again.", by, nb.Scope(), nb.Limits(), spentText(&nb, spent))
	case DecisionLift:
		nb.LiftedOn = day
		detail = fmt.Sprintf("budget of %s lifted for the day by %s", nb.Scope(), by)
		told = fmt.Sprintf("%s lifted the budget of %s for the rest of the UTC day: you may take work again.", by, nb.Scope())
	}
	nb.SetBy, nb.UpdatedAt = by, now
	if err := tx.PutBudget(&nb); err != nil {
		return "", "", err
	}
	if a.Message != "" {
		told += " " + a.Message
	}
	m := &Message{Project: it.Project, From: by, SenderKind: senderKindOf(nil, by), To: []string{it.AgentName}, Kind: KindMessage, CreatedAt: now,
		Body: fmt.Sprintf("Answer from %s to the budget (inbox item %d): %s", by, it.ID, told)}
	if err := tx.InsertMessage(m, []Delivery{{AgentID: it.AgentID}}); err != nil {
		return "", "", err
	}
	return it.Project, fmt.Sprintf("budget %d: %s", it.ID, detail), nil
}

// budgetAnswerTx is what answering a budget item writes besides the item.
type budgetAnswerTx interface {
	// BudgetTx
	BudgetsOf(agentID int64, project string) ([]*Budget, error)
	DaySpend(agentID int64, project string, day time.Time) (UsageCounts, error)
	PutBudget(b *Budget) error
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
}

// budgetHoldsTx is what next_task's budget gate reads.
type budgetHoldsTx interface {
	BudgetHolds(agentID int64, project string, day time.Time) (bool, error)
}

// budgetHolds reports whether a budget stops agent's work at now.
func budgetHolds[G budgetHoldsTx](ctx context.Context, st txs[G], agent *Agent, now time.Time) (bool, error) {
	var held bool
	err := view(ctx, st, func(tx G) (err error) {
		held, err = tx.BudgetHolds(agent.ID, ProjectOr(agent.Project), BudgetDay(now))
		return err
	})
	return held, err
}

// noBudgetsFor bounds how long the knowledge that no budget exists is
// trusted without reading the store. A budget set through this process
// ends it at once (Budgets.Set, inside its write, so no check that follows
// the write misses the budget); one set through another process sharing
// the store is seen by the checks from noBudgetsFor after it at most.
const noBudgetsFor = 2 * time.Second

// noBudgets knows, in memory, that no budget exists at all, so that
// holding each usage report against budgets (Budgets.check) reads nothing
// on a hub that has none, as most have.
type noBudgets struct {
	mu    sync.Mutex
	until time.Time // known until then; zero: not known
	gen   uint64    // bumped by forget: a read from before it is not kept
}

// known reports whether no budget exists at now, as last read.
func (n *noBudgets) known(now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return now.Before(n.until)
}

// generation returns the value to pass to seen for a read starting now.
func (n *noBudgets) generation() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.gen
}

// seen records that a read at now that started at generation gen found no
// budget, unless a budget was set since.
func (n *noBudgets) seen(gen uint64, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if gen == n.gen {
		n.until = now.Add(noBudgetsFor)
	}
}

// forget ends what is known: a budget is being set.
func (n *noBudgets) forget() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.until = time.Time{}
	n.gen++
}
