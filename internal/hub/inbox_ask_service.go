package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// What agents ask of people: a host's permission prompt (RequestApproval),
// a question (AskHuman), and what a host's hooks say of the agent
// (NoteHost). The inbox itself, the answers and the rules are in
// inbox_service.go.

// ApprovalRequest is a host's permission prompt relayed by its hook.
type ApprovalRequest struct {
	Tool    string // the host's tool name
	Input   string // the tool's input as the host gave it (JSON)
	CallKey string // names the call, for the PostToolUse that may follow
	Wait    time.Duration
	// SuggestedRule is the host's rule for an "always allow" of the call
	// (kept when checkSuggestedRule understands it).
	SuggestedRule string
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
	start := in.clock.Now()
	tool := strings.TrimSpace(req.Tool)
	switch {
	case tool == "":
		return nil, Errorf(EINVALID, "tool is empty: give the host's tool name (Bash, Edit, …)")
	case len(tool) > maxToolName:
		return nil, Errorf(EINVALID, "tool is %d bytes; the limit is %d", len(tool), maxToolName)
	case len(req.Input) > MaxApprovalInput:
		return nil, Errorf(EINVALID, "input is %d bytes; the limit is %d (64 KiB): a larger call is not relayed, its host asks at the terminal", len(req.Input), MaxApprovalInput)
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
		CallKey: req.CallKey, SuggestedRule: checkSuggestedRule(tool, req.SuggestedRule), CreatedAt: now}
	var rule *ApprovalRule
	err := update(ctx, in.store, func(tx inboxTx) error {
		rules, err := tx.ApprovalRulesFor(it.Project, tool, now)
		if err != nil {
			return err
		}
		it.State, it.AnsweredAt, it.AnsweredBy, it.Decision = ItemOpen, time.Time{}, "", ""
		if rule = MatchRule(rules, caller.ID, it.Project, tool, req.Input, now); rule != nil {
			it.State, it.AnsweredAt, it.AnsweredBy, it.Decision = ItemAnswered, now, fmt.Sprintf("rule %d", rule.ID), DecisionAllow
		} else if err := in.checkOpenRoom(tx, caller); err != nil {
			return err
		}
		if err := tx.InsertInboxItem(it); err != nil {
			return err
		}
		detail := fmt.Sprintf("approval %d: %s", it.ID, it.Title)
		if rule != nil {
			return recordEvent(tx, caller.ID, EventInboxAnswered, detail+" allowed by "+it.AnsweredBy+" ("+rule.Describe()+" for the "+rule.Scope()+", set by "+rule.CreatedBy+")", now)
		}
		return recordEvent(tx, caller.ID, EventInboxOpened, detail, now)
	})
	if err != nil {
		return nil, err
	}
	if rule != nil {
		in.changed()
		return &ApprovalResult{Item: it}, nil
	}
	in.Opened(it)
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
	// Every look reads the item, the first too: the item committed before
	// the call registered, so an answer may have come in between.
	return in.waiters.parkOnItem(ctx, it.ID, it.AgentID, in.clock, d, in.shutdown, func() (*InboxItem, error) {
		rctx, cancel := detachedRead(ctx)
		defer cancel()
		var got *InboxItem
		err := view(rctx, in.store, func(tx inboxTx) (err error) {
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
	err := update(ctx, in.store, func(tx inboxTx) error {
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
	in.changed()
	return got, nil
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
	start := in.clock.Now()
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
	err = update(ctx, in.store, func(tx inboxTx) error {
		if err := in.checkOpenRoom(tx, caller); err != nil {
			return err
		}
		if err := tx.InsertInboxItem(it); err != nil {
			return err
		}
		return recordEvent(tx, caller.ID, EventInboxOpened, fmt.Sprintf("question %d: %s", it.ID, it.Title), now)
	})
	if err != nil {
		return nil, err
	}
	in.Opened(it)
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

// TurnEnded is HostNeedsInput's text when a stop the hub lets go ends the
// agent's turn (a stop hook's CheckStop, then NoteHostEvent).
const TurnEnded = "finished its turn: waiting for your input"

// AnsweredAtTerminal is who answered an approval that a person settled in
// the host's own prompt, seen when the call ran while the item was open.
const AnsweredAtTerminal = "terminal"

// NoteHost records what caller's host reports: needs input opens a
// needs-input item unless one is open; the others withdraw it, and a tool
// that ran marks the expired approval of that call (CallKey) as run at
// the terminal, or closes its open approval as answered at the terminal
// (the hook waiting on it exits with no decision). Most reports change nothing and cost one read. Errors:
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
	var open, asked *InboxItem
	var ran bool
	err := view(ctx, in.store, func(tx inboxTx) error {
		it, err := tx.OpenItemOf(caller.ID, KindNeedsInput)
		if err == nil {
			open = it
		} else if ErrorCode(err) != ENOTFOUND {
			return err
		}
		if ev == HostToolRan && callKey != "" {
			items, err := tx.ListInboxItems(ItemQuery{AgentID: caller.ID, State: ItemExpired, CallKey: callKey, Limit: 1})
			ran = err == nil && len(items) > 0 && items[0].RanAt.IsZero()
			if err != nil {
				return err
			}
			// The host's own prompt races the waiting hook: a person who
			// answered there first ran the call while its item is open.
			items, err = tx.ListInboxItems(ItemQuery{AgentID: caller.ID, State: ItemOpen, CallKey: callKey, Limit: 1})
			if err == nil && len(items) > 0 && items[0].Kind == KindApproval {
				asked = items[0]
			}
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case ev == HostNeedsInput && open != nil, ev != HostNeedsInput && open == nil && !ran && asked == nil:
		return nil
	}
	now := in.clock.Now()
	var made *InboxItem
	err = update(ctx, in.store, func(tx inboxTx) error {
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
		if asked != nil {
			// Answered at the terminal: the waiting hook goes with no
			// decision, and a later answer is refused (no longer open).
			if _, err := tx.CloseInboxItem(asked.ID, ItemAnswered, ItemClose{At: now, By: AnsweredAtTerminal}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if made != nil {
		in.Opened(made)
	} else {
		in.changed()
	}
	return nil
}
