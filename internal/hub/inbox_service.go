package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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
	// ListInboxItems returns the items matching q, newest first.
	ListInboxItems(q ItemQuery) ([]*InboxItem, error)
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
	// ListApprovalRules returns the rules live at now (every rule when
	// all is set), newest first, their agent's name filled.
	ListApprovalRules(now time.Time, all bool) ([]*ApprovalRule, error)
	// RevokeApprovalRule sets the rule's revocation time unless it is
	// already revoked. ENOTFOUND.
	RevokeApprovalRule(id int64, at time.Time) error
}

// ItemQuery selects inbox items. Zero fields match all.
type ItemQuery struct {
	AgentID int64
	State   ItemState
	Project string
	CallKey string
	Limit   int
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

// agentWaker wakes agents' parked WaitForMessages calls (Waiters).
type agentWaker interface {
	Notify(agentIDs ...int64)
}

// InboxOptions are the inbox's own settings.
type InboxOptions struct {
	// RuleTTL is how long a remembered allow answers requests (default 7 days).
	RuleTTL time.Duration
	// ApprovalWaitMax bounds a hook's wait for an answer (default 10 min).
	ApprovalWaitMax time.Duration
	// MaxParked bounds the calls parked on items in the whole hub (default 10,000).
	MaxParked int
	// Sink hears of items opened (nil: nobody).
	Sink ItemSink
}

// Inbox is the service of the inbox: approvals, questions and agents
// waiting for input, answered by people.
type Inbox struct {
	store Store
	clock Clock
	cfg   Config
	opts  InboxOptions
	wake  agentWaker
	feed  *Feed
	waits *answerWaits
}

// NewInbox returns the inbox over store. wake wakes the parked waits of an
// agent a question's answer is posted to; feed announces TopicInbox.
func NewInbox(store Store, clock Clock, cfg Config, opts InboxOptions, wake agentWaker, feed *Feed) *Inbox {
	if opts.RuleTTL <= 0 {
		opts.RuleTTL = 7 * 24 * time.Hour
	}
	if opts.ApprovalWaitMax <= 0 {
		opts.ApprovalWaitMax = 10 * time.Minute
	}
	if opts.MaxParked <= 0 {
		opts.MaxParked = 10000
	}
	return &Inbox{store: store, clock: clock, cfg: cfg, opts: opts, wake: wake, feed: feed, waits: newAnswerWaits(opts.MaxParked)}
}

// opened announces new items: the live stream, the sink.
func (in *Inbox) opened(items ...*InboxItem) {
	in.feed.Publish(TopicInbox)
	if in.opts.Sink != nil {
		for _, it := range items {
			in.opts.Sink.ItemOpened(it)
		}
	}
}

// ApprovalRequest is a host's permission prompt relayed by its hook.
type ApprovalRequest struct {
	Tool    string // the host's tool name
	Input   string // the tool's input as the host gave it (JSON)
	CallKey string // names the call, for the PostToolUse that may follow
	Wait    time.Duration
}

// ApprovalResult is the outcome of RequestApproval: Item answered
// (Decision set), or TimedOut with Item expired.
type ApprovalResult struct {
	Item     *InboxItem
	TimedOut bool
}

// RequestApproval opens an approval for caller's tool call and waits up to
// req.Wait (and a little before ctx's deadline) for a person's answer. A
// remembered allow answers at once. Unanswered, the item is marked expired
// (left to the host's own prompt) before the call returns, whatever ended
// the wait. Errors: EINVALID, EEXHAUSTED.
func (in *Inbox) RequestApproval(ctx context.Context, caller *Agent, req ApprovalRequest) (*ApprovalResult, error) {
	start := time.Now() // real time: the caller's deadline is
	tool := strings.TrimSpace(req.Tool)
	switch {
	case tool == "":
		return nil, Errorf(EINVALID, "tool is empty: give the host's tool name (Bash, Edit, …)")
	case len(tool) > maxToolName:
		return nil, Errorf(EINVALID, "tool is %d bytes; the limit is %d", len(tool), maxToolName)
	case len(req.Input) > maxItemBody:
		return nil, Errorf(EINVALID, "input is %d bytes; the limit is %d", len(req.Input), maxItemBody)
	case len(req.CallKey) > maxCallKey:
		return nil, Errorf(EINVALID, "call_key is %d bytes; the limit is %d", len(req.CallKey), maxCallKey)
	case req.Wait <= 0:
		return nil, Errorf(EINVALID, "wait_seconds must be 1 or more: a hook that relays nothing does not call")
	}
	if err := checkLine("tool", tool); err != nil {
		return nil, err
	}
	if err := checkLine("call_key", req.CallKey); err != nil {
		return nil, err
	}
	if req.Input != "" && !json.Valid([]byte(req.Input)) {
		return nil, Errorf(EINVALID, "input is not JSON: pass the host's tool_input as it came")
	}
	wait := min(req.Wait, in.opts.ApprovalWaitMax)
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, d.Sub(start)-in.cfg.DeadlineMargin)
	}
	now := in.clock.Now()
	it := &InboxItem{Kind: KindApproval, AgentID: caller.ID, AgentName: caller.Name, Project: ProjectOr(caller.Project),
		Title: approvalTitle(tool, summarize(req.Input)), Body: req.Input, Tool: tool, Urgency: UrgencyNormal, State: ItemOpen,
		CallKey: req.CallKey, CreatedAt: now}
	var rule *ApprovalRule
	err := in.store.Update(ctx, func(tx Tx) error {
		rules, err := tx.ApprovalRulesFor(it.Project, tool, now)
		if err != nil {
			return err
		}
		it.State, it.AnsweredAt, it.AnsweredBy, it.Decision = ItemOpen, time.Time{}, "", ""
		if rule = MatchRule(rules, caller.ID, it.Project, tool, now); rule != nil {
			it.State, it.AnsweredAt, it.AnsweredBy, it.Decision = ItemAnswered, now, fmt.Sprintf("rule %d", rule.ID), DecisionAllow
		}
		if err := tx.InsertInboxItem(it); err != nil {
			return err
		}
		detail := fmt.Sprintf("approval %d: %s", it.ID, it.Title)
		if rule != nil {
			return recordEvent(tx, caller.ID, EventInboxAnswered, detail+" allowed by "+it.AnsweredBy+" ("+rule.Scope()+", set by "+rule.CreatedBy+")", now)
		}
		return recordEvent(tx, caller.ID, EventInboxOpened, detail, now)
	})
	if err != nil {
		return nil, err
	}
	if rule != nil {
		in.feed.Publish(TopicInbox)
		return &ApprovalResult{Item: it}, nil
	}
	in.opened(it)
	got, perr := in.park(ctx, it, wait)
	if perr == nil && !got.Open() {
		return &ApprovalResult{Item: got}, nil
	}
	// Nobody answered (or the call could not park): the host shows its
	// own prompt, and the item says so.
	expired, err := in.expire(context.WithoutCancel(ctx), it, "nobody answered in time: left to the terminal")
	if err != nil {
		return nil, err
	}
	if perr != nil && expired.State == ItemExpired {
		return nil, perr
	}
	return &ApprovalResult{Item: expired, TimedOut: expired.State == ItemExpired}, nil
}

// park waits up to d for item it to leave the open state.
func (in *Inbox) park(ctx context.Context, it *InboxItem, d time.Duration) (*InboxItem, error) {
	if d <= 0 {
		return it, nil
	}
	first := true
	return in.waits.parkOn(ctx, it.ID, d, func() (*InboxItem, error) {
		if first { // just written: nothing to read yet
			first = false
			return it, nil
		}
		rctx, cancel := detachedRead(ctx)
		defer cancel()
		var got *InboxItem
		err := in.store.View(rctx, func(tx Tx) (err error) {
			got, err = tx.InboxItemByID(it.ID)
			return err
		})
		return got, err
	})
}

// expire closes an open item as expired; answered meanwhile, it returns
// the answer.
func (in *Inbox) expire(ctx context.Context, it *InboxItem, why string) (*InboxItem, error) {
	var got *InboxItem
	now := in.clock.Now()
	err := in.store.Update(ctx, func(tx Tx) error {
		ok, err := tx.CloseInboxItem(it.ID, ItemExpired, ItemClose{At: now})
		if err != nil {
			return err
		}
		if ok {
			if err := recordEvent(tx, it.AgentID, EventInboxExpired, fmt.Sprintf("%s %d: %s", it.Kind, it.ID, why), now); err != nil {
				return err
			}
		}
		got, err = tx.InboxItemByID(it.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	in.feed.Publish(TopicInbox)
	return got, nil
}

// summarize returns the part of a tool's input a person reads first: its
// command, file path, URL or description; else the JSON itself.
func summarize(input string) string {
	var m map[string]any
	if json.Unmarshal([]byte(input), &m) == nil {
		for _, k := range []string{"command", "file_path", "path", "url", "pattern", "query", "description"} {
			if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
				return oneLine(s)
			}
		}
	}
	return oneLine(input)
}

// QuestionRequest is the input of AskHuman.
type QuestionRequest struct {
	Question string
	Options  []string
	Urgency  string
	// TimeoutSeconds: nil means the default; 0 only asks; above the
	// maximum is clamped.
	TimeoutSeconds *int32
}

// QuestionResult is the outcome of AskHuman: the question, answered or
// still open when the wait timed out.
type QuestionResult struct {
	Item     *InboxItem
	TimedOut bool
}

// AskHuman opens a question from caller and waits for the answer like
// WaitForMessages waits for a message. Unanswered in time, the question
// stays open: its answer, whenever given, also reaches the agent as a
// message. Errors: EINVALID, EEXHAUSTED.
func (in *Inbox) AskHuman(ctx context.Context, caller *Agent, req QuestionRequest) (*QuestionResult, error) {
	start := time.Now() // real time: the caller's deadline is
	q := strings.TrimSpace(req.Question)
	switch {
	case q == "":
		return nil, Errorf(EINVALID, "question is empty: write what you need a person to decide")
	case len(q) > maxItemBody:
		return nil, Errorf(EINVALID, "question is %d bytes; the limit is %d", len(q), maxItemBody)
	}
	if !utf8.ValidString(q) {
		return nil, Errorf(EINVALID, "question must be valid UTF-8 text")
	}
	if err := CheckOptions(req.Options); err != nil {
		return nil, err
	}
	urgency, err := ParseUrgency(req.Urgency)
	if err != nil {
		return nil, err
	}
	deadline, _ := ctx.Deadline()
	budget := waitBudget{Default: in.cfg.WaitDefault, Max: in.cfg.WaitMax, Margin: in.cfg.DeadlineMargin}
	wait, err := budget.park(req.TimeoutSeconds, start, deadline)
	if err != nil {
		return nil, err
	}
	now := in.clock.Now()
	title := oneLine(q)
	if i := strings.IndexAny(q, "\n"); i > 0 {
		title = oneLine(q[:i])
	}
	it := &InboxItem{Kind: KindQuestion, AgentID: caller.ID, AgentName: caller.Name, Project: ProjectOr(caller.Project),
		Title: cutText(title, maxItemTitle), Body: q, Options: req.Options, Urgency: urgency, State: ItemOpen, CreatedAt: now}
	err = in.store.Update(ctx, func(tx Tx) error {
		if err := tx.InsertInboxItem(it); err != nil {
			return err
		}
		return recordEvent(tx, caller.ID, EventInboxOpened, fmt.Sprintf("question %d: %s", it.ID, it.Title), now)
	})
	if err != nil {
		return nil, err
	}
	in.opened(it)
	got, err := in.park(ctx, it, wait)
	if ErrorCode(err) == EEXHAUSTED {
		// Too many calls wait for people: the question is asked all the
		// same, and its answer arrives as a message.
		return &QuestionResult{Item: it, TimedOut: true}, nil
	} else if err != nil {
		return nil, err
	}
	return &QuestionResult{Item: got, TimedOut: got.Open()}, nil
}

// HostEvent is what an agent host's hook reports of the agent's state.
type HostEvent string

// The host events.
const (
	// HostNeedsInput: the agent waits at its prompt for a person (an idle
	// prompt, the host's own permission prompt, a turn ended).
	HostNeedsInput HostEvent = "needs_input"
	// HostActive: a prompt was submitted; the agent works again.
	HostActive HostEvent = "active"
	// HostToolRan: a tool call ran (PostToolUse); the agent works again.
	HostToolRan HostEvent = "tool_ran"
	// HostSessionEnd: the session ended.
	HostSessionEnd HostEvent = "session_end"
)

// NoteHost records what caller's host reports: needs input opens a
// needs-input item unless one is open; the others withdraw it, and a tool
// that ran marks the expired approval of that call (CallKey) as run at
// the terminal. Most reports change nothing and cost one read. Errors:
// EINVALID.
func (in *Inbox) NoteHost(ctx context.Context, caller *Agent, ev HostEvent, text, callKey string) error {
	switch ev {
	case HostNeedsInput, HostActive, HostToolRan, HostSessionEnd:
	default:
		return Errorf(EINVALID, "event %q is not one: give needs_input, active, tool_ran or session_end", ev)
	}
	if len(callKey) > maxCallKey {
		return Errorf(EINVALID, "call_key is %d bytes; the limit is %d", len(callKey), maxCallKey)
	}
	text = cutText(strings.TrimSpace(oneLine(text)), maxItemTitle)
	var open *InboxItem
	var ran bool
	err := in.store.View(ctx, func(tx Tx) error {
		it, err := tx.OpenItemOf(caller.ID, KindNeedsInput)
		if err == nil {
			open = it
		} else if ErrorCode(err) != ENOTFOUND {
			return err
		}
		if ev == HostToolRan && callKey != "" {
			items, err := tx.ListInboxItems(ItemQuery{AgentID: caller.ID, State: ItemExpired, CallKey: callKey, Limit: 1})
			ran = err == nil && len(items) > 0 && items[0].RanAt.IsZero()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case ev == HostNeedsInput && open != nil, ev != HostNeedsInput && open == nil && !ran:
		return nil
	}
	now := in.clock.Now()
	var made *InboxItem
	err = in.store.Update(ctx, func(tx Tx) error {
		made = nil
		cur, err := tx.OpenItemOf(caller.ID, KindNeedsInput)
		if err != nil && ErrorCode(err) != ENOTFOUND {
			return err
		}
		if ev == HostNeedsInput {
			if cur != nil {
				return nil
			}
			if text == "" {
				text = "waiting for your input"
			}
			made = &InboxItem{Kind: KindNeedsInput, AgentID: caller.ID, AgentName: caller.Name, Project: ProjectOr(caller.Project),
				Title: text, Urgency: UrgencyNormal, State: ItemOpen, CreatedAt: now}
			if err := tx.InsertInboxItem(made); err != nil {
				return err
			}
			return recordEvent(tx, caller.ID, EventInboxOpened, fmt.Sprintf("needs input %d: %s", made.ID, text), now)
		}
		if cur != nil {
			if _, err := tx.CloseInboxItem(cur.ID, ItemWithdrawn, ItemClose{At: now}); err != nil {
				return err
			}
		}
		if ev == HostToolRan && callKey != "" {
			if _, err := tx.MarkItemRan(caller.ID, callKey, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if made != nil {
		in.opened(made)
	} else {
		in.feed.Publish(TopicInbox)
	}
	return nil
}

// ListItems returns the inbox for a person: the open items first (urgent,
// then oldest), then the others, newest first, within limit (default 100).
// A state or project narrows it. Errors: EINVALID.
func (in *Inbox) ListItems(ctx context.Context, state, project string, limit int) ([]*InboxItem, error) {
	st, err := ParseItemState(state)
	if err != nil {
		return nil, err
	}
	if project != "" {
		if err := ValidateProjectName(project); err != nil {
			return nil, err
		}
	}
	if limit < 0 || limit > in.cfg.MaxListLimit {
		return nil, Errorf(EINVALID, "limit %d is out of range: give 1-%d, or 0 for the default (100)", limit, in.cfg.MaxListLimit)
	}
	if limit == 0 {
		limit = 100
	}
	var out []*InboxItem
	err = in.store.View(ctx, func(tx Tx) error {
		q := ItemQuery{State: st, Project: project, Limit: limit}
		if st == "" {
			q.State = ItemOpen
		}
		items, err := tx.ListInboxItems(q)
		if err != nil || st != "" {
			out = items
			return err
		}
		out = items
		if rest := limit - len(items); rest > 0 {
			more, err := tx.ListInboxItems(ItemQuery{Project: project, Limit: rest + len(items)})
			if err != nil {
				return err
			}
			for _, it := range more {
				if !it.Open() && len(out) < limit {
					out = append(out, it)
				}
			}
		}
		return nil
	})
	SortInbox(out)
	return out, err
}

// AnswerItem records by's answer to item id: an approval's decision (and,
// for a remembered allow, its rule), a question's answer (also posted to
// the agent as a message from by, in the same commit, so an agent that
// stopped waiting still gets it). Parked calls on the item wake at once.
// by is the person answering (Operator for the admin token). Errors:
// EINVALID, ENOTFOUND, EPRECONDITION (not open any more).
func (in *Inbox) AnswerItem(ctx context.Context, by string, id int64, a Answer) (*InboxItem, error) {
	if id <= 0 {
		return nil, Errorf(EINVALID, "id %d is not an inbox item's: `hubctl inbox` lists them", id)
	}
	now := in.clock.Now()
	var it *InboxItem
	var posted bool
	err := in.store.Update(ctx, func(tx Tx) error {
		var err error
		posted = false
		if it, err = tx.InboxItemByID(id); err != nil {
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
		if decision != "" {
			detail = fmt.Sprintf("approval %d: %s %s by %s", id, it.Title, map[string]string{DecisionAllow: "allowed", DecisionDeny: "denied"}[decision], by)
		}
		if a.Remember != "" {
			r := &ApprovalRule{Project: it.Project, Tool: it.Tool, CreatedBy: by, CreatedAt: now, ExpiresAt: now.Add(in.opts.RuleTTL), ItemID: id}
			if a.Remember == RememberAgent {
				r.AgentID = it.AgentID
			}
			if err := tx.InsertApprovalRule(r); err != nil {
				return err
			}
			detail += fmt.Sprintf(", remembered for the %s as rule %d until %s", a.Remember, r.ID, r.ExpiresAt.UTC().Format(time.RFC3339))
		}
		if err := recordEvent(tx, it.AgentID, EventInboxAnswered, detail, now); err != nil {
			return err
		}
		if it.Kind != KindApproval && text != "" {
			m := &Message{Project: it.Project, From: by, To: []string{it.AgentName}, Kind: KindMessage, CreatedAt: now,
				Body: fmt.Sprintf("Answer from %s to your %s (inbox item %d, %q): %s", by, strings.ReplaceAll(string(it.Kind), "_", " "), id, cutText(it.Title, 120), text)}
			if err := tx.InsertMessage(m, []Delivery{{AgentID: it.AgentID}}); err != nil {
				return err
			}
			posted = true
		}
		it, err = tx.InboxItemByID(id)
		return err
	})
	if err != nil {
		return nil, err
	}
	in.waits.notify(id)
	if posted {
		in.wake.Notify(it.AgentID)
	}
	in.feed.Publish(TopicInbox)
	return it, nil
}

// ListRules returns the remembered allows live now (all of them, revoked
// and expired included, when all is set).
func (in *Inbox) ListRules(ctx context.Context, all bool) ([]*ApprovalRule, error) {
	var out []*ApprovalRule
	err := in.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.ListApprovalRules(in.clock.Now(), all)
		return err
	})
	return out, err
}

// RevokeRule revokes a remembered allow: later requests ask a person
// again. Errors: EINVALID, ENOTFOUND.
func (in *Inbox) RevokeRule(ctx context.Context, by string, id int64) error {
	if id <= 0 {
		return Errorf(EINVALID, "id %d is not a rule's: `hubctl inbox rules` lists them", id)
	}
	now := in.clock.Now()
	err := in.store.Update(ctx, func(tx Tx) error {
		if err := tx.RevokeApprovalRule(id, now); err != nil {
			return err
		}
		return recordEvent(tx, 0, EventRuleRevoked, fmt.Sprintf("approval rule %d revoked by %s", id, by), now)
	})
	if err == nil {
		in.feed.Publish(TopicInbox)
	}
	return err
}
