package hub

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Event kinds of the inbox, in the agent's timeline.
const (
	EventInboxOpened   EventKind = "inbox_opened"   // an item was opened
	EventInboxAnswered EventKind = "inbox_answered" // a person (or a rule) answered it
	EventInboxExpired  EventKind = "inbox_expired"  // nobody answered in time: left to the terminal
	EventRuleRevoked   EventKind = "approval_rule_revoked"
)

// InboxTx stores inbox items and remembered approvals.
type InboxTx interface {
	// InsertInboxItem inserts it and sets it.ID.
	InsertInboxItem(it *InboxItem) error
	// InboxItemByID returns one item, its agent's name filled. ENOTFOUND.
	InboxItemByID(id int64) (*InboxItem, error)
	// InboxItemsByID returns the items with these IDs that exist.
	InboxItemsByID(ids []int64) ([]*InboxItem, error)
	// ListInboxItems returns the items matching q, newest first (with
	// ByUrgency, urgent first, then oldest).
	ListInboxItems(q ItemQuery) ([]*InboxItem, error)
	// CountOpenItems returns how many items are open of the agent and of
	// the project.
	CountOpenItems(agentID int64, project string) (agent, inProject int, err error)
	// OpenItemOf returns the agent's newest open item of kind. ENOTFOUND.
	OpenItemOf(agentID int64, kind ItemKind) (*InboxItem, error)
	// CloseInboxItem moves item id from open to state with c, in one
	// conditional write, and reports whether it did: of two answers racing
	// for an item, exactly one gets true.
	CloseInboxItem(id int64, state ItemState, c ItemClose) (bool, error)
	// MarkItemRan sets RanAt on the agent's newest expired approval with
	// callKey whose call has not been seen to run, and reports whether
	// there was one.
	MarkItemRan(agentID int64, callKey string, at time.Time) (bool, error)
	// InsertApprovalRule inserts r and sets r.ID.
	InsertApprovalRule(r *ApprovalRule) error
	// ApprovalRulesFor returns the rules of project for tool that are
	// live at now.
	ApprovalRulesFor(project, tool string, now time.Time) ([]*ApprovalRule, error)
	// ApprovalRules returns the rules live at now (every rule when
	// all is set), newest first, their agent's name filled.
	ApprovalRules(now time.Time, all bool) ([]*ApprovalRule, error)
	// ApprovalRuleByID returns one rule, its agent's name filled. ENOTFOUND.
	ApprovalRuleByID(id int64) (*ApprovalRule, error)
	// RevokeApprovalRule sets the rule's revocation time unless it is
	// already revoked. ENOTFOUND.
	RevokeApprovalRule(id int64, at time.Time) error
}

// ItemQuery selects inbox items. Zero fields match all.
type ItemQuery struct {
	AgentID int64
	State   ItemState
	Closed  bool // any state but open
	Kind    ItemKind
	Project string
	// Projects keeps the items of these projects, if any (a person's).
	Projects []string
	CallKey  string
	Before   time.Time // created before
	// ByUrgency orders urgent items first, then oldest, from after
	// (AfterRank, AfterID) (rank 0 urgent, 1 normal); else newest first,
	// IDs below AfterID. AfterID 0: from the start.
	ByUrgency bool
	AfterRank int
	AfterID   int64
	Limit     int
}

// ItemClose is how an item leaves the open state.
type ItemClose struct {
	At       time.Time
	By       string
	Decision string
	Answer   string
	Remember string
}

// ItemSink hears of every item opened, after its commit (the webhooks).
// It must not block.
type ItemSink interface {
	ItemOpened(it *InboxItem)
}

// InboxOptions are the inbox's own settings.
type InboxOptions struct {
	// RuleTTL is how long a remembered allow answers requests (default 7 days).
	RuleTTL time.Duration
	// ApprovalWaitMax bounds a hook's wait for an answer (default 10 min).
	ApprovalWaitMax time.Duration
	// MaxOpenPerAgent bounds an agent's open items (default 50).
	MaxOpenPerAgent int
	// MaxOpenPerProject bounds a project's open items (default 1,000).
	MaxOpenPerProject int
}

// Inbox is the service of the inbox: approvals, questions and agents
// waiting for input, answered by people.
type Inbox struct {
	*core
	store txs[inboxTx] // the store methods it uses
	opts  InboxOptions
	sink  ItemSink // nil: nobody hears of new items
}

// inboxTx is what the inbox reads and writes in one transaction: its
// items and rules, the events of the agents' timelines, and the message
// that carries a question's answer.
type inboxTx interface {
	// BudgetTx
	BudgetsOf(agentID int64, project string) ([]*Budget, error)
	DaySpend(agentID int64, project string, day time.Time) (UsageCounts, error)
	PutBudget(b *Budget) error
	// ChangesTx
	Recording() *Changes
	// EventTx
	InsertEvent(e *Event) error
	// InboxTx
	ApprovalRuleByID(id int64) (*ApprovalRule, error)
	ApprovalRules(now time.Time, all bool) ([]*ApprovalRule, error)
	ApprovalRulesFor(project, tool string, now time.Time) ([]*ApprovalRule, error)
	CloseInboxItem(id int64, state ItemState, c ItemClose) (bool, error)
	CountOpenItems(agentID int64, project string) (agent, inProject int, err error)
	InboxItemByID(id int64) (*InboxItem, error)
	InboxItemsByID(ids []int64) ([]*InboxItem, error)
	InsertApprovalRule(r *ApprovalRule) error
	InsertInboxItem(it *InboxItem) error
	ListInboxItems(q ItemQuery) ([]*InboxItem, error)
	MarkItemRan(agentID int64, callKey string, at time.Time) (bool, error)
	OpenItemOf(agentID int64, kind ItemKind) (*InboxItem, error)
	RevokeApprovalRule(id int64, at time.Time) error
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
}

// NewInbox returns the inbox's service. A question's answer wakes the
// asker's parked waits; every change is announced as TopicInbox.
func NewInbox(c *Core, opts InboxOptions) *Inbox {
	if opts.RuleTTL <= 0 {
		opts.RuleTTL = 7 * 24 * time.Hour
	}
	if opts.ApprovalWaitMax <= 0 {
		opts.ApprovalWaitMax = 10 * time.Minute
	}
	if opts.MaxOpenPerAgent <= 0 {
		opts.MaxOpenPerAgent = 50
	}
	if opts.MaxOpenPerProject <= 0 {
		opts.MaxOpenPerProject = 1000
	}
	return &Inbox{core: c.core, store: txsOf[inboxTx](c.store), opts: opts}
}

// SetSink makes sink hear of every item opened from now on (the webhooks'
// dispatcher; wired by internal/app before serving).
func (in *Inbox) SetSink(sink ItemSink) { in.sink = sink }

// Opened announces new items: the live stream, the sink.
func (in *Inbox) Opened(items ...*InboxItem) {
	in.changed()
	if in.sink != nil {
		for _, it := range items {
			in.sink.ItemOpened(it)
		}
	}
}

// changed announces a change of the inbox on the live stream.
func (in *Inbox) changed() { in.waiters.feed.Publish(TopicInbox) }

// ListItems returns a page of the inbox for a person (nil: the admin):
// the open items of the projects the person sees first (urgent, then
// oldest, over all of them), then the others, newest first, at most limit
// (default 100), and the token of the next page ("" on the last). A state
// or project narrows it. Errors: EINVALID, EPERMISSION (a project the
// person does not see).
func (in *Inbox) ListItems(ctx context.Context, who *Person, state, project string, limit int, pageToken string) ([]*InboxItem, string, error) {
	st, err := ParseItemState(state)
	if err != nil {
		return nil, "", err
	}
	if project != "" {
		if err := ValidateProjectName(project); err != nil {
			return nil, "", err
		}
		if err := CheckSees(who, project); err != nil {
			return nil, "", err
		}
	}
	var projects []string
	if who != nil {
		projects = who.Projects
	}
	if limit < 0 || limit > in.cfg.MaxListLimit {
		return nil, "", Errorf(EINVALID, "limit %d is out of range: give 1-%d, or 0 for the default (100)", limit, in.cfg.MaxListLimit)
	}
	if limit == 0 {
		limit = 100
	}
	at, err := parseInboxPage(pageToken)
	if err != nil {
		return nil, "", err
	}
	var out []*InboxItem
	next := ""
	err = view(ctx, in.store, func(tx inboxTx) error {
		out, next = nil, ""
		if at.open && (st == "" || st == ItemOpen) {
			items, err := tx.ListInboxItems(ItemQuery{State: ItemOpen, Project: project, Projects: projects, ByUrgency: true, AfterRank: at.rank, AfterID: at.id, Limit: limit + 1})
			if err != nil {
				return err
			}
			if len(items) > limit {
				out = items[:limit]
				next = inboxPage{open: true, rank: urgencyRank(out[limit-1]), id: out[limit-1].ID}.String()
				return nil
			}
			out = items
			if st == ItemOpen {
				return nil
			}
			at = inboxPage{}
		}
		rest := limit - len(out)
		q := ItemQuery{State: st, Closed: st == "", Project: project, Projects: projects, AfterID: at.id, Limit: rest + 1}
		items, err := tx.ListInboxItems(q)
		if err != nil {
			return err
		}
		if len(items) > rest {
			items = items[:rest]
			next = inboxPage{}.String() // the others from the newest
			if rest > 0 {
				next = inboxPage{id: items[rest-1].ID}.String()
			}
		}
		out = append(out, items...)
		return nil
	})
	return out, next, err
}

// countOpenItemsTx counts the open inbox items of an agent and its project.
type countOpenItemsTx interface {
	CountOpenItems(agentID int64, project string) (agent, inProject int, err error)
}

// checkOpenRoom returns EEXHAUSTED when the agent or its project holds as
// many open items as it may: one agent cannot bury the others' items.
func (in *Inbox) checkOpenRoom(tx countOpenItemsTx, caller *Agent) error {
	agent, inProject, err := tx.CountOpenItems(caller.ID, ProjectOr(caller.Project))
	switch {
	case err != nil:
		return err
	case agent >= in.opts.MaxOpenPerAgent:
		return Errorf(EEXHAUSTED, "agent %s has %d open inbox items, the limit per agent (%d): wait for the answers before asking more", caller.Name, agent, in.opts.MaxOpenPerAgent)
	case inProject >= in.opts.MaxOpenPerProject:
		return Errorf(EEXHAUSTED, "project %s has %d open inbox items, the limit per project (%d): wait for the answers before asking more", ProjectOr(caller.Project), inProject, in.opts.MaxOpenPerProject)
	}
	return nil
}

// AnswerItem records by's answer to item id: an approval's decision (and,
// for a remembered allow, its rule), a question's answer (also posted to
// the agent as a message from by, in the same commit, so an agent that
// stopped waiting still gets it). Parked calls on the item wake at once.
// who is the person answering (nil: the operator, with the admin token).
// Errors: EINVALID, ENOTFOUND, EPERMISSION (an item of a project the
// person does not see), EPRECONDITION (not open any more).
func (in *Inbox) AnswerItem(ctx context.Context, who *Person, id int64, a Answer) (*InboxItem, error) {
	by := who.Acting()
	if id <= 0 {
		return nil, Errorf(EINVALID, "id %d is not an inbox item's: `hubctl inbox` lists them", id)
	}
	now := in.clock.Now()
	var it *InboxItem
	err := update(ctx, in.store, func(tx inboxTx) error {
		var err error
		if it, err = tx.InboxItemByID(id); err != nil {
			return err
		}
		if err := CheckSees(who, it.Project); err != nil {
			return err
		}
		decision, text, err := CheckAnswer(it, a)
		if err != nil {
			return err
		}
		ok, err := tx.CloseInboxItem(id, ItemAnswered, ItemClose{At: now, By: by, Decision: decision, Answer: text, Remember: a.Remember})
		if err != nil {
			return err
		}
		if !ok {
			cur, err := tx.InboxItemByID(id)
			if err != nil {
				return err
			}
			_, _, err = CheckAnswer(cur, a)
			return err
		}
		detail := fmt.Sprintf("%s %d: %s answered by %s", strings.ReplaceAll(string(it.Kind), "_", " "), id, it.Title, by)
		switch {
		case it.Kind == KindBudget:
			var released string
			if released, detail, err = answerBudget(tx, it, decision, a, by, now); err != nil {
				return err
			}
			tx.Recording().TasksChanged(released)
		case decision != "":
			detail = fmt.Sprintf("approval %d: %s %s by %s", id, it.Title, map[string]string{DecisionAllow: "allowed", DecisionDeny: "denied"}[decision], by)
		}
		if a.Remember != "" {
			if !in.live(it, now) {
				return Errorf(EPRECONDITION, "approval %d was opened %s ago, longer than any hook waits (%s): its call is not waiting any more, so no rule is made from it", id, now.Sub(it.CreatedAt).Round(time.Second), in.opts.ApprovalWaitMax)
			}
			covers, pattern := ruleScope(it, a.WholeTool)
			r := &ApprovalRule{Project: it.Project, Tool: it.Tool, Covers: covers, Pattern: pattern, CreatedBy: by, CreatedAt: now, ExpiresAt: now.Add(in.opts.RuleTTL), ItemID: id}
			if a.Remember == RememberAgent {
				r.AgentID = it.AgentID
			}
			if err := tx.InsertApprovalRule(r); err != nil {
				return err
			}
			detail += fmt.Sprintf(", remembered for the %s as rule %d (%s) until %s", a.Remember, r.ID, r.Describe(), r.ExpiresAt.UTC().Format(time.RFC3339))
		}
		if err := recordEvent(tx, it.AgentID, EventInboxAnswered, detail, now); err != nil {
			return err
		}
		if it.Kind != KindApproval && it.Kind != KindBudget && text != "" {
			m := &Message{Project: it.Project, From: by, SenderKind: senderKindOf(nil, by), To: []string{it.AgentName}, Kind: KindMessage, CreatedAt: now,
				Body: fmt.Sprintf("Answer from %s to your %s (inbox item %d, %q): %s", by, strings.ReplaceAll(string(it.Kind), "_", " "), id, cutText(it.Title, 120), text)}
			if err := tx.InsertMessage(m, []Delivery{{AgentID: it.AgentID}}); err != nil {
				return err
			}
		}
		it, err = tx.InboxItemByID(id)
		return err
	})
	if err != nil {
		return nil, err
	}
	in.changed()
	return it, nil
}

// live reports whether approval it may still have its hook waiting at now:
// no hook waits longer than ApprovalWaitMax.
func (in *Inbox) live(it *InboxItem, now time.Time) bool {
	return it.Kind != KindApproval || now.Sub(it.CreatedAt) <= in.opts.ApprovalWaitMax+time.Minute
}

// ExpireDeadApprovals closes as expired the open approvals created before
// before: their hooks are gone (a hub that stopped without closing them,
// or past the longest wait), and they are answered at the terminal. It
// returns how many it closed. A hub on its own store calls it at start
// with the start time; every hub calls it as time passes (Run) with the
// longest wait ago.
func (in *Inbox) ExpireDeadApprovals(ctx context.Context, before time.Time) (int, error) {
	now := in.clock.Now()
	n := 0
	for {
		var items []*InboxItem
		err := view(ctx, in.store, func(tx inboxTx) (err error) {
			items, err = tx.ListInboxItems(ItemQuery{State: ItemOpen, Kind: KindApproval, Before: before, Limit: 500})
			return err
		})
		if err != nil || len(items) == 0 {
			if n > 0 {
				in.changed()
			}
			return n, err
		}
		err = update(ctx, in.store, func(tx inboxTx) error {
			for _, it := range items {
				ok, err := tx.CloseInboxItem(it.ID, ItemExpired, ItemClose{At: now})
				if err != nil {
					return err
				}
				if ok {
					n++
					if err := recordEvent(tx, it.AgentID, EventInboxExpired, fmt.Sprintf("approval %d: its hook is gone (opened %s): left to the terminal", it.ID, it.CreatedAt.UTC().Format(time.RFC3339)), now); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return n, err
		}
	}
}

// ListRules returns the remembered allows live now (all of them, revoked
// and expired included, when all is set) of the projects who sees (nil:
// the admin, every project).
func (in *Inbox) ListRules(ctx context.Context, who *Person, all bool) ([]*ApprovalRule, error) {
	var out []*ApprovalRule
	err := view(ctx, in.store, func(tx inboxTx) (err error) {
		out, err = tx.ApprovalRules(in.clock.Now(), all)
		return err
	})
	return SeenBy(out, who, func(r *ApprovalRule) string { return r.Project }), err
}

// RevokeRule revokes a remembered allow for who (nil: the operator):
// later requests ask a person again. Errors: EINVALID, ENOTFOUND,
// EPERMISSION (a rule of a project the person does not see).
func (in *Inbox) RevokeRule(ctx context.Context, who *Person, id int64) error {
	if id <= 0 {
		return Errorf(EINVALID, "id %d is not a rule's: `hubctl inbox rules` lists them", id)
	}
	by := who.Acting()
	now := in.clock.Now()
	err := update(ctx, in.store, func(tx inboxTx) error {
		if !who.SeesAll() {
			r, err := tx.ApprovalRuleByID(id)
			if err != nil {
				return err
			}
			if err := CheckSees(who, r.Project); err != nil {
				return err
			}
		}
		if err := tx.RevokeApprovalRule(id, now); err != nil {
			return err
		}
		return recordEvent(tx, 0, EventRuleRevoked, fmt.Sprintf("approval rule %d revoked by %s", id, by), now)
	})
	if err == nil {
		in.changed()
	}
	return err
}

// Run expires, every minute, the approvals open past the longest wait
// (their hooks are gone), and is the fallback that finds answers given
// through another hub process sharing the store whose notification was
// lost (PostgreSQL replicas tell each other of a closed item at its commit:
// ItemsClosed): every poll interval, while calls are parked, one read of
// their items wakes those that were answered. Answers given through this
// process wake their calls at their commit.
func (in *Inbox) Run(ctx context.Context) error {
	every := in.cfg.PollInterval
	if every <= 0 || every > time.Minute {
		every = time.Minute
	}
	t := in.clock.NewTicker(every)
	defer t.Stop()
	swept := in.clock.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		if now := in.clock.Now(); now.Sub(swept) >= time.Minute {
			swept = now
			in.ExpireDeadApprovals(ctx, now.Add(-in.opts.ApprovalWaitMax-time.Minute)) // a failed sweep is tried again next minute
		}
		ids := in.waiters.parkedItems()
		if in.cfg.PollInterval <= 0 || len(ids) == 0 {
			continue
		}
		var closed []int64
		err := view(ctx, in.store, func(tx inboxTx) error {
			items, err := tx.InboxItemsByID(ids)
			closed = closed[:0]
			for _, it := range items {
				if !it.Open() {
					closed = append(closed, it.ID)
				}
			}
			return err
		})
		if err == nil {
			in.ItemsClosed(closed...)
		}
	}
}

// ItemsClosed wakes the calls parked on the inbox items ids, closed by
// another hub process sharing the store (a replica on the same database).
func (in *Inbox) ItemsClosed(ids ...int64) {
	in.wake(&Changes{items: ids})
}
