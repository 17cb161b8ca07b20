package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hooksock"
	"github.com/agenthub/hub/internal/hub"
)

// hookRefresh is how long the bridge answers its agent's hooks without
// sending one to the hub: the hub counts the hook path live for
// hub.HookWindow (5 minutes) after it last saw a hook, so one hook in this
// long keeps the path live for the hub, and the people watching it.
const hookRefresh = 2 * time.Minute

// watchStale is how long a parked watch of the hub counts as live: the
// push loop's long-poll returns within pushPoll, so one silent for longer
// is on a connection that is gone.
const watchStale = pushPoll + waitGrace

// known is what the bridge knows of its agent at the hub, for answering the
// agent's hooks (hooksock) without the hub. The watch of the agent's
// messages (the push loop's long-poll, watch) feeds it; the hooks it sends
// to the hub and that come back synced (answer) clear it.
//
// A hook with nothing new is answered here when the watch is parked at the
// hub after every message it was handed (the hub wakes it on anything new
// for the agent: messages, nudges, pulses, notices), heard from the hub
// within watchStale on a connection that is up, and nothing happened since
// the last hook that went through the hub (seq == synced): no message
// arrived that a channel notification did not show the agent (the hub
// passes over what is in the agent's context: such a hook would inject
// nothing), no event of the host (a stop, a notification, a permission
// request, which may leave the agent marked waiting for a person or an
// approval open, that only the hub closes), no failed watch. Anything else
// sends the hook to the hub, as without a bridge; but a prompt or a tool
// use of a hook that takes a printed answer, with no event of the host
// since the last hook the hub answered, is the hub's injection alone: the
// bridge takes it (bridge.answerHook, on its stream) and answers with
// the hook's output. The hub sees that hook (TakeInjection: the hook path
// is live), so it counts as one that came back from the hub. After an
// event of the host, a hook that gives its note (hooksock.Query.Note:
// the agent works again) is the note and the injection: the bridge
// reports the one and takes the other, as the hook would at the hub, and
// that clears the event as a hook of the hub would. A notification with
// its note is that note alone, a stop its check (hooksock.Query.Stop), a
// session's end its note and EndSession (hooksock.Query.End) and a
// permission request its approval (hooksock.Query.Approval): the bridge
// makes them, and each is an event of the host as one the hub answered.
type known struct {
	now   func() time.Time
	ready func() bool // the connection to the hub is up

	mu       sync.Mutex
	cursor   string    // the newest message the watch was handed
	started  bool      // a watch has ended: cursor is where the hub put it
	watching bool      // the watch is parked at the hub after cursor
	freshAt  time.Time // when the hub last confirmed cursor: the watch parked
	seq      uint64    // counts what the hooks have not seen through the hub
	synced   uint64    // seq when a hook last came back from the hub
	syncedAt time.Time // and when
	// host counts the events of the host the hub has not seen through a
	// prompt or a tool use (they are in seq too); hostSynced is host when
	// one last came back from the hub.
	host, hostSynced uint64
}

func newKnown(now func() time.Time, ready func() bool) *known {
	return &known{now: now, ready: ready, seq: 1}
}

// watch is the one point that feeds k from the hub: the watch parks after
// cursor; the returned function takes its end, with the cursor past what
// it was handed (n messages) or its error. When it was handed messages,
// the function it returns in turn says they are all in the agent's
// context now (a channel notification showed them): the hooks have none
// of them to inject, so unless something else happened meanwhile they
// stay answered here.
func (k *known) watch(cursor string) func(n int, next string, err error) (shown func()) {
	if k == nil {
		return func(int, string, error) func() { return func() {} }
	}
	k.mu.Lock()
	k.cursor, k.watching, k.freshAt = cursor, true, k.now()
	k.mu.Unlock()
	return func(n int, next string, err error) func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.watching = false
		// A moved cursor with nothing handed out is what the hub passed
		// over (a watch stream's frames carry nothing else), and the first
		// watch only places it: an agent that never read a message has
		// no cursor until its first message moves it.
		if err != nil || n > 0 || (k.started && next != "" && next != k.cursor) {
			k.seq++
		}
		k.started = k.started || err == nil
		if n == 0 || err != nil {
			return func() {}
		}
		seq := k.seq
		return func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			if k.seq == seq && k.synced == seq-1 {
				k.synced = seq
			}
		}
	}
}

// hookAct is what the bridge does itself for a hook it would send to the
// hub, when the hook takes a printed answer.
type hookAct int

const (
	actNone     hookAct = iota // nothing: the hook asks the hub
	actTake                    // the injection
	actNoteTake                // the hook's note, then the injection
	actNote                    // the hook's note (a notification)
	actStop                    // the stop's check, then the note of a turn ended when the hub lets it go
	actEnd                     // the session's end: its note, then EndSession
	actApproval                // the permission request's approval: a person's decision
)

// answer answers one hook run (hooksock.Serve): quiet when nothing is new,
// else to the hub, with what to run once the hub has answered that hook.
// act is what the bridge may do in the hub's place: the injection alone
// when no event of the host waits for the hub (a prompt or a tool use,
// the event noted by the hub's hook path, clears what those leave), else
// the hook's note first; a notification's note alone; a stop's check, a
// session's end, a permission request's approval.
func (k *known) answer(q hooksock.Query) (rep hooksock.Reply, synced func(), act hookAct) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	seq, host := k.seq, k.host
	synced = func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if seq >= k.synced {
			k.synced, k.syncedAt = seq, k.now()
		}
		if host >= k.hostSynced {
			k.hostSynced = host
		}
	}
	var why string
	switch {
	case q.Step != hooksock.StepInject:
		// The hub decides (a stop, an approval), and what it records
		// (waiting for a person, an open approval) only a hook that
		// reaches it clears: the next one goes there too, and so does
		// one that came back from the hub before the hub recorded this.
		k.seq++
		k.host++
		again := func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.seq++
			k.host++
		}
		switch {
		case q.Note != nil:
			act = actNote
		case q.Stop != nil:
			act = actStop
		case q.End:
			act = actEnd
		case q.Approval != nil:
			act = actApproval
		}
		return hooksock.Reply{Answer: hooksock.AnswerHub, Why: fmt.Sprintf("%s is the hub's to answer", q.Event)}, again, act
	case !k.watching:
		why = "the bridge does not follow the agent's messages now (no channel push, or between two polls)"
	case now.Sub(k.freshAt) > watchStale:
		why = fmt.Sprintf("the bridge last heard from the hub %v ago", now.Sub(k.freshAt).Round(time.Second))
	case !k.ready():
		why = "the bridge's connection to the hub is not up"
	case k.synced != k.seq:
		why = "something happened since the last hook the hub answered"
	case now.Sub(k.syncedAt) >= hookRefresh:
		why = "the hub has not seen a hook of this agent for a while"
	default:
		return hooksock.Reply{Answer: hooksock.AnswerQuiet}, nil, actNone
	}
	switch {
	case k.host == k.hostSynced:
		act = actTake
	case q.Note != nil:
		act = actNoteTake
	}
	return hooksock.Reply{Answer: hooksock.AnswerHub, Why: why}, synced, act
}

// serveHooks answers the agent's hooks at path until the returned function
// runs, which closes the socket and removes its file. A socket it cannot
// open is logged: the hooks then ask the hub.
func (b *bridge) serveHooks(path, token string) (stop func()) {
	ln, err := hooksock.Listen(path)
	if err != nil {
		b.opts.Logger.Warn("hooks: no local socket; the agent's hooks ask the hub", "err", err)
		return func() {}
	}
	b.opts.Logger.Info("hooks: the agent's hooks ask this bridge first", "socket", path)
	b.approvals = make(chan struct{}, carriedApprovals)
	logger := b.opts.Logger
	done := make(chan struct{})
	go func() {
		defer close(done)
		hooksock.Serve(ln, token, func(ctx context.Context, q hooksock.Query) (hooksock.Reply, func()) {
			rep, synced, act := b.known.answer(q)
			if act != actNone && q.Print && b.opts.HookOutput != nil {
				printed, confirm, err := b.answerHook(ctx, q, act)
				if err == nil {
					synced()
					logger.Debug("hooks: answered", "event", q.Event, "answer", printed.Answer, "why", "asked the hub on its stream")
					return printed, confirm
				}
				rep.Why += "; the bridge could not ask the hub: " + err.Error()
			}
			logger.Debug("hooks: answered", "event", q.Event, "answer", rep.Answer, "why", rep.Why)
			return rep, synced
		}, logger)
	}()
	return func() { ln.Close(); <-done }
}

// takeWait bounds the bridge's calls for a hook: within the hook's wait
// for the answer (hooksock.PrintWait), so that a bridge that gives up
// leaves the hook time to ask the hub.
const takeWait = hooksock.PrintWait / 2

// carriedApprovals bounds the approvals the bridge's stream carries at
// once, each parked until a person answers: the hub runs a few calls of a
// stream at a time (8), and the agent's waits and its other hooks' calls
// keep room there. An approval past them is a call of its own.
const carriedApprovals = 2

// approvalGrace is what the bridge waits for a permission request's
// answer beyond the wait for a person: the hub answers by then (a time-out
// too), and the hook waits longer still (hooklocal.ApprovalMargin).
const approvalGrace = hooksock.PrintWait

// ApprovalRequest is the RequestApproval of a permission request's hook,
// made by the hook or by its bridge (hooksock.Query.Approval).
func ApprovalRequest(a hooksock.Approval) *hubv1.RequestApprovalRequest {
	return &hubv1.RequestApprovalRequest{Tool: a.Tool, Input: a.Input, CallKey: a.CallKey, SuggestedRule: a.SuggestedRule,
		WaitSeconds: int32(min(a.WaitSeconds, math.MaxInt32))}
}

// HookAnswer is what the hub answered a hook run's calls, which its
// output shows (Options.HookOutput): for a prompt or a tool use the
// injection, for a stop its check, for a permission request the approval
// asked and, unless nobody answered in time, its reply; nothing for a
// notification or a session's end.
type HookAnswer struct {
	Injection *hubv1.TakeInjectionResponse
	Stop      *hubv1.CheckStopResponse
	Asked     *hubv1.RequestApprovalRequest
	Approval  *hubv1.RequestApprovalResponse
}

// confirmWait bounds the confirmation of what a hook printed.
const confirmWait = 2 * time.Second

// answerHook answers the hook q with its output (AnswerPrint), making what
// act says on the bridge's stream (else by calls on the bridge's
// connection), the calls the hook would make at the hub in the same order:
// the hook's note (NoteHostEvent), then for a prompt or a tool use the
// injection; for a stop its check (CheckStop), then, let go, the note that
// the turn ended; for a session's end its note, then EndSession; for a
// permission request its approval (RequestApproval), which waits for a
// person. The output is the hook's for what the hub answered
// (Options.HookOutput). confirm, run once the hook printed it, confirms
// the messages shown (IN_CONTEXT via hook), on the stream too. The calls
// end with ctx (the hook is gone): an approval's is then left to the
// terminal. An error is the call's as the hook would have met it: the hook
// then asks the hub, which makes the calls again (each repeated call is
// one the hub takes twice alike; an approval refused); but an approval
// the hub did not answer within its wait is the hook's quiet answer, as
// when nobody answered in time, not a second question to a person.
func (b *bridge) answerHook(ctx context.Context, q hooksock.Query, act hookAct) (rep hooksock.Reply, confirm func(), err error) {
	wait := takeWait
	if act == actApproval {
		wait = time.Duration(q.Approval.WaitSeconds)*time.Second + approvalGrace
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	note := func(n hooksock.Note) error {
		req := &hubv1.NoteHostEventRequest{Event: n.Event, Text: n.Text, CallKey: n.CallKey}
		_, err := carried(ctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_NoteHostEvent{NoteHostEvent: req}},
			(*hubv1.StreamReply).GetNoteHostEvent,
			func() (*hubv1.NoteHostEventResponse, error) { return b.client.NoteHostEvent(ctx, req) })
		return err
	}
	var a HookAnswer
	switch act {
	case actNote, actNoteTake:
		if err := note(*q.Note); err != nil {
			return rep, nil, err
		}
	case actStop:
		req := &hubv1.CheckStopRequest{Continuing: q.Stop.Continuing}
		if a.Stop, err = carried(ctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_CheckStop{CheckStop: req}},
			(*hubv1.StreamReply).GetCheckStop,
			func() (*hubv1.CheckStopResponse, error) { return b.client.CheckStop(ctx, req) }); err != nil {
			return rep, nil, err
		}
		if !a.Stop.GetHold() {
			if err := note(hooksock.Note{Event: string(hub.HostNeedsInput), Text: hub.TurnEnded}); err != nil {
				return rep, nil, err
			}
		}
	case actEnd:
		if err := note(hooksock.Note{Event: string(hub.HostSessionEnd)}); err != nil {
			return rep, nil, err
		}
		req := &hubv1.EndSessionRequest{Via: hub.ViaHook.String()}
		if _, err := carried(ctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_EndSession{EndSession: req}},
			(*hubv1.StreamReply).GetEndSession,
			func() (*hubv1.EndSessionResponse, error) { return b.client.EndSession(ctx, req) }); err != nil {
			return rep, nil, err
		}
	case actApproval:
		if n := len(q.Approval.Input); n > hub.MaxApprovalInput {
			return rep, nil, fmt.Errorf("the call's input is %d bytes, over what an approval holds", n)
		}
		a.Asked = ApprovalRequest(*q.Approval)
		alone := func() (*hubv1.RequestApprovalResponse, error) { return b.client.RequestApproval(ctx, a.Asked) }
		select {
		case b.approvals <- struct{}{}:
			a.Approval, err = carried(ctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_RequestApproval{RequestApproval: a.Asked}},
				(*hubv1.StreamReply).GetRequestApproval, alone)
			<-b.approvals
		default:
			a.Approval, err = alone()
		}
		if err != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return rep, nil, err
		}
	}
	if act == actTake || act == actNoteTake {
		req := &hubv1.TakeInjectionRequest{}
		if a.Injection, err = carried(ctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_TakeInjection{TakeInjection: req}},
			(*hubv1.StreamReply).GetTakeInjection,
			func() (*hubv1.TakeInjectionResponse, error) { return b.client.TakeInjection(ctx, req) }); err != nil {
			return rep, nil, err
		}
	}
	out, shown, ok := b.opts.HookOutput(q.Host, q.Event, a)
	if !ok {
		// The hub moved the injection's cursor: what it handed out is
		// not shown by this hook but stays unread.
		return rep, nil, fmt.Errorf("%s has no hook event %q answered so", q.Host, q.Event)
	}
	confirm = func() {
		if len(shown) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), confirmWait)
		defer cancel()
		req := &hubv1.ConfirmDeliveryRequest{Ids: shown, Via: hub.ViaHook.String()}
		if _, err := carried(ctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_ConfirmDelivery{ConfirmDelivery: req}},
			(*hubv1.StreamReply).GetConfirmDelivery,
			func() (*hubv1.ConfirmDeliveryResponse, error) { return b.client.ConfirmDelivery(ctx, req) }); err != nil {
			b.opts.Logger.Warn("hooks: the messages a hook showed are not marked in context", "err", err)
		}
	}
	return hooksock.Reply{Answer: hooksock.AnswerPrint, Output: out}, confirm, nil
}
