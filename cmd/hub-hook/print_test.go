package main

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hooksock"
)

// TestToolUseWithSomethingNewPrintsTheBridgesAnswer: the bridge took the
// injection from the hub and hands hub-hook its output (AnswerPrint):
// hub-hook prints it as it is, exits with its status without running the
// hub, and tells the bridge it printed it (Synced), so that the bridge
// confirms the messages shown. The query says the hook takes a printed
// answer, for its host.
func TestToolUseWithSomethingNewPrintsTheBridgesAnswer(t *testing.T) {
	r := newRig(t, true)
	ln, err := hooksock.Listen(filepath.Join(r.dir, "agent-hub", filepath.Base(hooksock.Path("127.0.0.1:9", "tok-ann"))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	const out = `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"[12] alice: the build is green"}}` + "\n"
	queries := make(chan hooksock.Query, 10)
	printed := make(chan struct{}, 10)
	go hooksock.Serve(ln, "tok-ann", func(q hooksock.Query) (hooksock.Reply, func()) {
		queries <- q
		return hooksock.Reply{Answer: hooksock.AnswerPrint, Output: out, Exit: 0}, func() { printed <- struct{}{} }
	}, slog.New(slog.DiscardHandler))

	code, stdout, stderr := r.run(t, "", postToolUse, "hook", "gemini", "AfterTool")
	if hub := r.handedOff(t); code != 0 || stdout != out || stderr != "" || hub != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q, the hub got %q; want 0, the bridge's output, nothing on stderr and no hub", code, stdout, stderr, hub)
	}
	if q := <-queries; !q.Print || q.Host != "gemini" || q.Step != hooksock.StepInject || q.Event != "AfterTool" {
		t.Errorf("the hook asked %+v; want a printed answer for gemini's AfterTool", q)
	}
	select {
	case <-printed:
	case <-time.After(10 * time.Second):
		t.Error("hub-hook did not tell the bridge it printed the answer")
	}
}
