package hub_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A reader that takes nothing holds the hub to StreamQueue frames and a
// resync at the cursor after them; a new stream from that cursor gets the
// rest, and a frame counts as delivered only once it was sent.
func TestStreamQueueIsBounded(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	var posted []int64
	for range hub.StreamQueue + 3 {
		posted = append(posted, h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "one of many"}).ID)
	}
	st, err := h.Subscribe(ctx, bob, hub.SubscribeRequest{Via: "channel", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitFor(t, "the stream to stop reading", st.Ended)
	if n := st.Queued(); n != hub.StreamQueue+1 {
		t.Fatalf("queued frames = %d, want %d (the queue and its resync)", n, hub.StreamQueue+1)
	}
	var got []int64
	var cursor int64
	for {
		f, err := st.Next(ctx)
		if f == nil {
			if err != nil {
				t.Fatalf("the stream ended with %v, want nil after its resync", err)
			}
			break
		}
		if f.Resync {
			if f.Cursor != cursor {
				t.Fatalf("resync at %d, want %d", f.Cursor, cursor)
			}
			continue
		}
		got = append(got, msgIDs(f.Messages)...)
		cursor = f.Cursor
	}
	if len(got) != hub.StreamQueue-1 { // the first frame holds the status
		t.Fatalf("frames carried %d messages, want %d", len(got), hub.StreamQueue-1)
	}
	st.Close()

	st, err = h.Subscribe(ctx, bob, hub.SubscribeRequest{Via: "channel", AfterID: hub.FormatMessageID(cursor)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for len(got) < len(posted) {
		f, err := st.Next(ctx)
		if err != nil || f.Resync {
			t.Fatalf("Next = %+v, %v", f, err)
		}
		if err := st.Sent(ctx, f); err != nil {
			t.Fatal(err)
		}
		got = append(got, msgIDs(f.Messages)...)
	}
	if !slices.Equal(got, posted) {
		t.Fatalf("frames carried %v, want %v", got, posted)
	}
	if err := h.FlushDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	for i, id := range posted {
		_, rs, err := h.Receipts.Get(ctx, alice, hub.FormatMessageID(id))
		if err != nil {
			t.Fatal(err)
		}
		sent := i >= hub.StreamQueue-1 // only the second stream's frames were sent
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
	// The stream parks on its own goroutine: advance the clock until it
	// hears of it (an advance before it parked is spent before its wait).
	var idle *hub.StreamFrame
	for try := 0; idle == nil; try++ {
		if try == 200 {
			t.Fatal("no frame after 200 idle periods")
		}
		h.Clock.Advance(hub.StreamIdle)
		nctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		idle, _ = st.Next(nctx)
		cancel()
	}
	if len(idle.Messages) != 0 || idle.Resync || idle.Cursor != first.Cursor {
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
