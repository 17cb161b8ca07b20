package mcpbridge

import (
	"errors"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hooksock"
	"github.com/agenthub/hub/internal/hub"
)

// TestHookRefreshKeepsTheHookPathLive: the bridge sends a hook to the hub
// often enough for the hub to count the hook path live throughout.
func TestHookRefreshKeepsTheHookPathLive(t *testing.T) {
	if hookRefresh >= hub.HookWindow {
		t.Errorf("hookRefresh %v is not below the hub's hook window %v", hookRefresh, hub.HookWindow)
	}
}

// TestKnownAnswersOnlyWhenSure walks the bridge's known state through
// what happens to an agent and checks, at each step, whether a tool use's
// hook is answered by the bridge (quiet) or sent to the hub.
func TestKnownAnswersOnlyWhenSure(t *testing.T) {
	now := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	up := true
	k := newKnown(func() time.Time { return now }, func() bool { return up })
	inject := hooksock.Query{Step: hooksock.StepInject, Event: "PostToolUse"}
	// A hook sent to the hub that asks the injection alone the bridge may
	// take itself (take): all but those after an event of the host.
	noTake := false
	ask := func(what string, want string, q hooksock.Query) func() {
		t.Helper()
		rep, synced, act := k.answer(q)
		if rep.Answer != want {
			t.Errorf("%s: answer %q (%s), want %q", what, rep.Answer, rep.Why, want)
		}
		wantAct := actNone
		switch {
		case want != hooksock.AnswerHub:
		case q.Step == hooksock.StepInject && !noTake:
			wantAct = actTake
		case q.Step == hooksock.StepInject && q.Note != nil:
			wantAct = actNoteTake
		case q.Step != hooksock.StepInject && q.Note != nil:
			wantAct = actNote
		case q.Step != hooksock.StepInject && q.Stop != nil:
			wantAct = actStop
		case q.Step != hooksock.StepInject && q.End:
			wantAct = actEnd
		case q.Step != hooksock.StepInject && q.Approval != nil:
			wantAct = actApproval
		}
		if act != wantAct {
			t.Errorf("%s: the bridge may do %v, want %v", what, act, wantAct)
		}
		if want == hooksock.AnswerHub && synced == nil {
			t.Errorf("%s: sent to the hub with nothing to learn when it comes back", what)
		}
		return synced
	}

	ask("a bridge that does not watch yet", hooksock.AnswerHub, inject)()
	ask("a bridge that does not watch yet, after a hook went to the hub", hooksock.AnswerHub, inject)
	woke := k.watch("")
	ask("nothing new", hooksock.AnswerQuiet, inject)
	ask("nothing new, again", hooksock.AnswerQuiet, inject)

	// A message arrives: the watch wakes; until a hook has been to the hub
	// after it, hooks go there, parked again or not.
	woke(1, "m5", nil)
	ask("the watch handling a message", hooksock.AnswerHub, inject)
	woke = k.watch("m5")
	back := ask("the first hook after a message", hooksock.AnswerHub, inject)
	ask("a hook whose hub call did not come back", hooksock.AnswerHub, inject)
	back()
	ask("nothing new after the message", hooksock.AnswerQuiet, inject)

	// A message a channel notification showed is in the agent's context:
	// a hook would inject nothing of it (the hub passes it over).
	woke(1, "m6", nil)()
	woke = k.watch("m6")
	ask("after a message shown in the agent's context", hooksock.AnswerQuiet, inject)
	// One the notification did not show (it was not called), or shown
	// after something else happened, is the hub's.
	woke(2, "m8", nil)
	woke = k.watch("m8")
	ask("after messages not all shown", hooksock.AnswerHub, inject)()
	shown := woke(1, "m9", nil)
	stop := ask("a stop while a message is being shown", hooksock.AnswerHub, hooksock.Query{Step: hooksock.StepOther, Event: "Stop"})
	shown()
	woke = k.watch("m9")
	noTake = true
	ask("a tool use after the stop and the shown message", hooksock.AnswerHub, inject)
	stop()
	ask("a tool use after the stop came back", hooksock.AnswerHub, inject)()
	noTake = false
	ask("nothing new once a tool use came back", hooksock.AnswerQuiet, inject)
	woke(0, "m9", nil)
	woke = k.watch("m9")

	// An empty reply (the poll's time-out) with the same cursor changes nothing.
	woke(0, "m9", nil)
	woke = k.watch("m9")
	ask("after an empty poll", hooksock.AnswerQuiet, inject)

	// A stop or a permission request is the hub's, and so is the next
	// tool use, even one whose hub call came back before the hub recorded
	// the stop.
	noTake = true // until a tool use's hook has been to the hub
	stopped := ask("a stop", hooksock.AnswerHub, hooksock.Query{Step: hooksock.StepOther, Event: "Stop"})
	tool := ask("a tool use while the stop is at the hub", hooksock.AnswerHub, inject)
	tool()
	stopped()
	next := ask("the tool use after the hub recorded the stop", hooksock.AnswerHub, inject)
	next()
	noTake = false
	ask("nothing new after the stop was cleared", hooksock.AnswerQuiet, inject)

	// A hook that gives its note: a notification is that note, which the
	// bridge may report; the next tool use reports its own note before
	// the injection, and once back, clears the event.
	noted := inject
	noted.Note = &hooksock.Note{Event: "tool_ran", CallKey: "k1"}
	notified := ask("a notification with its note", hooksock.AnswerHub, hooksock.Query{Step: hooksock.StepOther, Event: "Notification",
		Note: &hooksock.Note{Event: "needs_input", Text: "waiting for your input"}})
	notified()
	noTake = true
	ask("a tool use without its note after the notification", hooksock.AnswerHub, inject)
	ask("a tool use with its note after the notification", hooksock.AnswerHub, noted)()
	noTake = false
	ask("nothing new once the noted tool use came back", hooksock.AnswerQuiet, noted)

	// A stop that gives its question, a session's end that says so: the
	// bridge may ask the hub, and each is an event of the host.
	ask("a stop with its question", hooksock.AnswerHub, hooksock.Query{Step: hooksock.StepOther, Event: "Stop", Stop: &hooksock.Stop{}})()
	noTake = true
	ask("a tool use without its note after the stop", hooksock.AnswerHub, inject)
	ask("a tool use with its note after the stop", hooksock.AnswerHub, noted)()
	ask("a session's end", hooksock.AnswerHub, hooksock.Query{Step: hooksock.StepOther, Event: "SessionEnd", End: true})()
	ask("a tool use with its note after the end", hooksock.AnswerHub, noted)()
	noTake = false
	ask("nothing new once the noted tool use came back after the end", hooksock.AnswerQuiet, noted)

	// A permission request that gives its approval: the bridge may ask the
	// hub, and it is an event of the host (the call's tool use says it ran).
	ask("a permission request with its approval", hooksock.AnswerHub,
		hooksock.Query{Step: hooksock.StepOther, Event: "PermissionRequest", Approval: &hooksock.Approval{Tool: "Bash", WaitSeconds: 60}})()
	noTake = true
	ask("a tool use without its note after the permission request", hooksock.AnswerHub, inject)
	ask("a tool use with its note after the permission request", hooksock.AnswerHub, noted)()
	noTake = false
	ask("nothing new once the noted tool use came back after the permission request", hooksock.AnswerQuiet, noted)

	// The connection drops: the hub is not heard.
	up = false
	ask("the connection to the hub is down", hooksock.AnswerHub, inject)
	up = true

	// A watch silent past its poll is on a connection that is gone.
	now = now.Add(watchStale + time.Second)
	ask("a watch silent too long", hooksock.AnswerHub, inject)
	woke(0, "", errors.New("deadline exceeded"))
	woke = k.watch("m5")
	ask("after a failed watch", hooksock.AnswerHub, inject)()
	ask("parked again and synced", hooksock.AnswerQuiet, inject)

	// The hub sees a hook of the agent now and then.
	now = now.Add(hookRefresh)
	woke(0, "m5", nil) // the polls' time-outs meanwhile
	woke = k.watch("m5")
	ask("no hook at the hub for hookRefresh", hooksock.AnswerHub, inject)()
	ask("after the refresh", hooksock.AnswerQuiet, inject)
	woke(0, "m5", nil)
	ask("the watch stopped", hooksock.AnswerHub, inject)
}
