package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// bridgeHookRefresh is how long a bridge answers its agent's hooks without
// sending one to the hub: hub mcp's hookRefresh (internal/mcpbridge/hooks.go),
// one hook in this long keeps the hook path live for the hub.
const bridgeHookRefresh = 2 * time.Minute

// bridgeHooks answers the hooks of an agent holding a stream as its hub mcp
// does (internal/mcpbridge/hooks.go): a real agent's hooks ask the bridge
// of its session, which holds the stream, and the bridge answers "nothing
// new" itself while the stream is open, no frame brought a message since
// the last hook it sent to the hub that its channel did not show the agent,
// no event of the host came since, and
// that hook is less than bridgeHookRefresh old. Anything else is the hub's
// injection, which the bridge takes on its stream (hookRun) on a hub that
// takes it there, and which goes to the hub (TakeInjection) on one that
// does not; after an event of the host (a notification, a stop), the
// hook's note first. The events of the host are the hub's to answer: the
// bridge makes their calls on its stream too (hookRun).
type bridgeHooks struct {
	mu       sync.Mutex
	open     bool      // the stream's first frame came and it has not ended
	seq      uint64    // counts what the hooks have not seen through the hub
	synced   uint64    // seq when a hook last came back from the hub
	syncedAt time.Time // and when
	// host counts the events of the host the hub has not seen through a
	// tool use's note (they are in seq too); hostSynced is host when one
	// last came back from the hub.
	host, hostSynced uint64
}

func newBridgeHooks() *bridgeHooks { return &bridgeHooks{seq: 1} }

// frame takes one frame of the stream with n messages; the function it
// returns says the bridge showed them all in the agent's context (a
// channel notification): the hooks have none of them to inject, so unless
// something else happened meanwhile they stay the bridge's to answer.
func (h *bridgeHooks) frame(n int) (shown func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open = true
	if n == 0 {
		return func() {}
	}
	h.seq++
	seq := h.seq
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.seq == seq && h.synced == seq-1 {
			h.synced = seq
		}
	}
}

// ended takes the stream's end: what came meanwhile is the hub's to tell.
func (h *bridgeHooks) ended() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open = false
	h.seq++
}

// ask answers one hook run of a tool use at now: quiet (false), or to the
// hub (true), with the hook's note first when an event of the host came
// since the last such note, and what to run once the hub has answered it.
func (h *bridgeHooks) ask(now time.Time) (toHub, note bool, answered func(at time.Time)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open && h.synced == h.seq && now.Sub(h.syncedAt) < bridgeHookRefresh {
		return false, false, nil
	}
	seq, host := h.seq, h.host
	return true, host != h.hostSynced, func(at time.Time) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if seq >= h.synced {
			h.synced, h.syncedAt = seq, at
		}
		if host >= h.hostSynced {
			h.hostSynced = host
		}
	}
}

// event takes a hook run of an event of the host, which the hub answers;
// the returned function runs once it has: what the hub records (waiting
// for a person) only a later hook that reaches it clears, so the next tool
// use goes there too, with its note.
func (h *bridgeHooks) event() (answered func()) {
	bump := func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.seq++
		h.host++
	}
	bump()
	return bump
}

// The host events a hook run reports (NoteHostEvent, hooklocal.HostNote),
// and what a stop the hub lets go notes (hub.TurnEnded).
const (
	noteNeedsInput = "needs_input"
	noteActive     = "active"
	noteToolRan    = "tool_ran"
	noteSessionEnd = "session_end"
	turnEnded      = "finished its turn: waiting for your input"
)

// hookRun makes the calls of one hook run at the hub, in the order hub
// hook makes them (internal/hook): on the agent's stream, as its bridge
// does (hub mcp: internal/mcpbridge/hooks.go), when the agent holds a
// stream that takes them, else alone on the hook's connection, as hub hook
// does without a bridge.
type hookRun struct {
	a       *fleetAgent
	ctx     context.Context
	carried bool // a call went on the stream
}

func (a *fleetAgent) hookRun(ctx context.Context) *hookRun { return &hookRun{a: a, ctx: ctx} }

// do makes call on the stream, or alone when no stream takes it; the
// reply is nil when alone made it.
func (h *hookRun) do(call *hubv1.StreamCall, alone func(context.Context, hubv1.AgentServiceClient) error) (*hubv1.StreamReply, error) {
	if h.a.bridge != nil {
		r, err := h.a.api.(*grpcAgent).calls.call(h.ctx, call)
		if !errors.Is(err, errNoStream) {
			h.carried = true
			return r, err
		}
	}
	c, err := h.a.hooks()
	if err != nil {
		return nil, err
	}
	return nil, alone(h.a.ref.authed(h.ctx), c)
}

func (h *hookRun) note(event, text, callKey string) error {
	req := &hubv1.NoteHostEventRequest{Event: event, Text: text, CallKey: callKey}
	_, err := h.do(&hubv1.StreamCall{Call: &hubv1.StreamCall_NoteHostEvent{NoteHostEvent: req}}, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		_, err := c.NoteHostEvent(ctx, req)
		return err
	})
	return err
}

// take takes the injection and confirms what it shows (via hook), as the
// hook does once it printed it.
func (h *hookRun) take() error {
	req := &hubv1.TakeInjectionRequest{}
	var r *hubv1.TakeInjectionResponse
	sr, err := h.do(&hubv1.StreamCall{Call: &hubv1.StreamCall_TakeInjection{TakeInjection: req}}, func(ctx context.Context, c hubv1.AgentServiceClient) (err error) {
		r, err = c.TakeInjection(ctx, req)
		return err
	})
	if sr != nil {
		r = sr.GetTakeInjection()
	}
	if err != nil {
		return err
	}
	return h.confirm(r.GetMessages())
}

func (h *hookRun) confirm(shown []*hubv1.Message) error {
	if len(shown) == 0 {
		return nil
	}
	req := &hubv1.ConfirmDeliveryRequest{Via: "hook"}
	for _, m := range shown {
		req.Ids = append(req.Ids, m.GetId())
	}
	_, err := h.do(&hubv1.StreamCall{Call: &hubv1.StreamCall_ConfirmDelivery{ConfirmDelivery: req}}, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		_, err := c.ConfirmDelivery(ctx, req)
		return err
	})
	return err
}

func (h *hookRun) checkStop(continuing bool) (*hubv1.CheckStopResponse, error) {
	req := &hubv1.CheckStopRequest{Continuing: continuing}
	var r *hubv1.CheckStopResponse
	sr, err := h.do(&hubv1.StreamCall{Call: &hubv1.StreamCall_CheckStop{CheckStop: req}}, func(ctx context.Context, c hubv1.AgentServiceClient) (err error) {
		r, err = c.CheckStop(ctx, req)
		return err
	})
	if sr != nil {
		r = sr.GetCheckStop()
	}
	return r, err
}

func (h *hookRun) endSession() error {
	req := &hubv1.EndSessionRequest{Via: "hook"}
	_, err := h.do(&hubv1.StreamCall{Call: &hubv1.StreamCall_EndSession{EndSession: req}}, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		_, err := c.EndSession(ctx, req)
		return err
	})
	return err
}

// callKeys numbers the tool calls the hooks report (NoteHostEvent's
// call_key: a hash of the call in hub hook).
var callKeys atomic.Uint64

// hook runs one hook of the agent's tool use: answered by the bridge when
// it holds the stream, with nothing new alone, else with the injection it
// takes on its stream (hub mcp on a hub that takes it there), after the
// note that the tool ran when an event of the host came since the last;
// else the hook's own calls: the note, then the injection (hub hook).
func (a *fleetAgent) hook(ctx context.Context, f *fleet) {
	var answered func(time.Time)
	note := true
	if a.bridge != nil {
		var toHub bool
		if toHub, note, answered = a.bridge.ask(time.Now()); !toHub {
			f.stats.call(opHookBridge, 0, nil)
			return
		}
	}
	h := a.hookRun(ctx)
	var err error
	if note {
		err = h.note(noteToolRan, "", fmt.Sprintf("%032x", callKeys.Add(1)))
	}
	if err == nil {
		err = h.take()
	}
	if err == nil && answered != nil {
		answered(time.Now())
	}
	o := opHook
	if h.carried {
		o = opHookStream
	}
	f.stats.call(o, 0, err)
}

// hostEvent runs one hook of an event of the host (a notification, a stop,
// the session's end) with calls, which the agent's bridge makes on its
// stream when it holds one, and counts it as o.
func (a *fleetAgent) hostEvent(ctx context.Context, f *fleet, o op, calls func(h *hookRun) error) {
	var answered func()
	if a.bridge != nil {
		answered = a.bridge.event()
	}
	h := a.hookRun(ctx)
	err := calls(h)
	if answered != nil {
		answered()
	}
	if h.carried && err == nil {
		f.stats.hostOnStream.Add(1)
	}
	f.stats.call(o, 0, err)
}

// notify is the host's notification that it waits for a person (a
// permission prompt, an idle prompt): the agent is marked waiting for one
// until its next tool use.
func (a *fleetAgent) notify(ctx context.Context, f *fleet) {
	a.hostEvent(ctx, f, opNotify, func(h *hookRun) error {
		return h.note(noteNeedsInput, "Claude needs your permission to use Bash", "")
	})
}

// stop is the end of the agent's turn: the hub holds it while direct
// messages or mentions are unread (the hook shows them and confirms them;
// the host goes on, continuing), else lets it go and the agent waits for
// a person. held says the hub held it.
func (a *fleetAgent) stop(ctx context.Context, f *fleet, continuing bool) (held bool) {
	a.hostEvent(ctx, f, opStop, func(h *hookRun) error {
		r, err := h.checkStop(continuing)
		if err != nil {
			return err
		}
		if held = r.GetHold(); held {
			f.stats.stopsHeld.Add(1)
			return h.confirm(r.GetMessages())
		}
		return h.note(noteNeedsInput, turnEnded, "")
	})
	return held
}

// endSession is the host's session ending, as the agent goes offline: the
// agent shows offline at once.
func (a *fleetAgent) endSession(ctx context.Context, f *fleet) {
	a.hostEvent(ctx, f, opSessionEnd, func(h *hookRun) error {
		if err := h.note(noteSessionEnd, "", ""); err != nil {
			return err
		}
		return h.endSession()
	})
}
