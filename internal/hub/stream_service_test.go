package hub_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A reader that takes nothing costs the hub nothing past the frame it
// holds: the stream reads a frame only when its reader asks for one, so
// what arrives meanwhile stays unread and unmarked, and comes, each
// message once and in order, when the reader asks again; a frame counts as
// delivered only once it was sent.
func TestStreamReadsOnlyWhatItsReaderTakes(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	st, err := h.Subscribe(ctx, bob, hub.SubscribeRequest{Via: "channel", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Next(ctx); err != nil { // the first frame
		t.Fatal(err)
	}
	var posted []int64
	for range 7 {
		posted = append(posted, h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "one of many"}).ID)
	}
	held, err := st.Next(ctx) // taken, never sent
	if err != nil {
		t.Fatal(err)
	}
	if got := msgIDs(held.Messages); !slices.Equal(got, posted[:2]) {
		t.Fatalf("first frame carried %v, want %v", got, posted[:2])
	}
	got := msgIDs(held.Messages)
	for len(got) < len(posted) {
		f, err := st.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Sent(ctx, f); err != nil {
			t.Fatal(err)
		}
		got = append(got, msgIDs(f.Messages)...)
	}
	if !slices.Equal(got, posted) {
		t.Fatalf("frames carried %v, want %v (each once, in order)", got, posted)
	}
	if err := h.FlushDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	for i, id := range posted {
		_, rs, err := h.Receipts.Get(ctx, alice, hub.FormatMessageID(id))
		if err != nil {
			t.Fatal(err)
		}
		sent := i >= 2 // the first frame was taken and never sent
		if delivered := !rs[0].DeliveredAt.IsZero(); delivered != sent || !rs[0].InContextAt.IsZero() {
			t.Errorf("message %d: receipt %+v, want delivered %v and not in context", id, rs[0], sent)
		}
	}
}

// A stream with nothing to send for StreamIdle sends its cursor alone, so
// its reader knows it is live; the messages after it still come.
func TestStreamSaysItIsLiveWhenIdle(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	st, err := h.Subscribe(ctx, bob, hub.SubscribeRequest{Via: "channel"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first, err := st.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The stream parks in Next: advance the clock until the parked Next
	// hears of it (an advance before it parked is spent before its wait).
	frames := make(chan *hub.StreamFrame, 1)
	go func() {
		f, _ := st.Next(ctx)
		frames <- f
	}()
	var idle *hub.StreamFrame
	for try := 0; idle == nil; try++ {
		if try == 200 {
			t.Fatal("no frame after 200 idle periods")
		}
		h.Clock.Advance(hub.StreamIdle)
		select {
		case idle = <-frames:
		case <-time.After(20 * time.Millisecond):
		}
	}
	if len(idle.Messages) != 0 || idle.Cursor != first.Cursor {
		t.Fatalf("idle frame = %+v, want the cursor %d alone", idle, first.Cursor)
	}
	id := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "after the quiet"}).ID
	for {
		f, err := st.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Messages) > 0 {
			if got := msgIDs(f.Messages); !slices.Equal(got, []int64{id}) {
				t.Fatalf("frame after the quiet carried %v, want [%d]", got, id)
			}
			break
		}
	}
}
