package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// Pruning deletes exactly the messages created before the time, in
// batches; later messages, their IDs and the readers' cursors are kept.
func TestPruneMessages(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	as := h.agents(t, "alice", "bob")
	ctx := context.Background()
	const old = hub.PruneBatch + 20 // more than one batch
	for range old {
		h.post(t, as[0], hub.PostRequest{To: []string{"bob"}, Body: "old"})
	}
	h.Clock.Advance(48 * time.Hour)
	cut := h.Clock.Now()
	h.Clock.Advance(time.Minute)
	keep := h.post(t, as[0], hub.PostRequest{To: []string{"bob"}, Body: "new"})
	n, err := h.PruneMessages(ctx, cut)
	if err != nil || n != old {
		t.Fatalf("PruneMessages = %d, %v; want %d", n, err, old)
	}
	inbox := h.inbox(t, as[1])
	if len(inbox) != 1 || inbox[0].ID != keep.ID {
		t.Errorf("bob's inbox after pruning: %d messages, want only %d", len(inbox), keep.ID)
	}
	if st, err := h.Status(ctx, as[1]); err != nil || st.Unread != 1 {
		t.Errorf("bob's unread count after pruning = %v (%v), want 1", st, err)
	}
	if h.maxMessageID(t) != keep.ID {
		t.Errorf("newest ID changed: %d, want %d", h.maxMessageID(t), keep.ID)
	}
	if next := h.post(t, as[0], hub.PostRequest{To: []string{"bob"}, Body: "after"}); next.ID <= keep.ID {
		t.Errorf("an ID was reused: %d after %d", next.ID, keep.ID)
	}
	_, err = h.PruneMessages(ctx, h.Clock.Now().Add(time.Hour))
	wantCode(t, "prune before a future time", err, hub.EINVALID)
	_, err = h.PruneMessages(ctx, time.Time{})
	wantCode(t, "prune without a time", err, hub.EINVALID)
}

func TestParseRetention(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"": 0, "0": 0, "30d": 30 * 24 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := hub.ParseRetention(in); err != nil || got != want {
			t.Errorf("ParseRetention(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1s", "59m", "-3d", "soon", "3w", "999999d"} {
		if _, err := hub.ParseRetention(in); hub.ErrorCode(err) != hub.EINVALID {
			t.Errorf("ParseRetention(%q): %v, want EINVALID", in, err)
		}
	}
}
