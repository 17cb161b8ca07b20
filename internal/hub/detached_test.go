package hub

import (
	"context"
	"testing"
	"time"
)

type detachedKey struct{}

// A detached read keeps the call's values and deadline but not its
// cancellation, and is bounded even when the call has no deadline.
func TestDetachedRead(t *testing.T) {
	t.Parallel()
	parent, cancelParent := context.WithDeadline(context.WithValue(context.Background(), detachedKey{}, "v"), time.Now().Add(5*time.Second))
	rctx, cancel := detachedRead(parent)
	defer cancel()
	cancelParent()
	if err := rctx.Err(); err != nil {
		t.Errorf("the call was cancelled and the read with it (%v), want the read to go on", err)
	}
	if got := rctx.Value(detachedKey{}); got != "v" {
		t.Errorf("value = %v, want the call's", got)
	}
	want, _ := parent.Deadline()
	if got, ok := rctx.Deadline(); !ok || !got.Equal(want) {
		t.Errorf("deadline = %v (%v), want the call's %v", got, ok, want)
	}

	before := time.Now()
	rctx2, cancel2 := detachedRead(context.Background())
	after := time.Now()
	got, ok := rctx2.Deadline()
	if !ok || got.Before(before.Add(maxDetachedRead)) || got.After(after.Add(maxDetachedRead)) {
		t.Errorf("without a call deadline: deadline %v (%v), want %v from now", got, ok, maxDetachedRead)
	}
	cancel2()
	if rctx2.Err() == nil {
		t.Error("cancel did not end the read's context")
	}
}
