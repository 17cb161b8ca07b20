package hub_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

func TestTakeInjectionCallerGoneMovesNothing(t *testing.T) {
	h := newTestHub(t)
	as := h.agents(t, "ann", "bob")
	ann, bob := as[0], as[1]
	m := h.post(t, ann, hub.PostRequest{To: []string{"bob"}, Body: "hello"})
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Injections.TakeInjection(gone, bob, 0); err == nil {
		t.Fatalf("TakeInjection for a caller that gave up succeeded")
	}
	inj, err := h.Injections.TakeInjection(context.Background(), bob, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(inj.Messages) != 1 || inj.Messages[0].ID != m.ID || inj.Cursor != m.ID {
		t.Errorf("after a caller gave up, TakeInjection = %v (cursor %d), want message %d", msgIDs(inj.Messages), inj.Cursor, m.ID)
	}
}

func TestTakeInjectionSkipsWhatWasRead(t *testing.T) {
	h := newTestHub(t)
	as := h.agents(t, "ann", "bob")
	ann, bob := as[0], as[1]
	h.post(t, ann, hub.PostRequest{To: []string{"bob"}, Body: "one"})
	two := h.post(t, ann, hub.PostRequest{To: []string{"bob"}, Body: "two"})
	if _, _, err := h.Messages.MarkRead(context.Background(), bob, ""); err != nil {
		t.Fatal(err)
	}
	three := h.post(t, ann, hub.PostRequest{To: []string{"bob"}, Body: "three"})
	inj, err := h.Injections.TakeInjection(context.Background(), bob, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgIDs(inj.Messages); len(got) != 1 || got[0] != three.ID {
		t.Errorf("injection = %v, want only %d (messages up to %d were read)", got, three.ID, two.ID)
	}
	if _, err := h.Injections.TakeInjection(context.Background(), bob, -1); hub.ErrorCode(err) != hub.EINVALID {
		t.Errorf("limit -1: %v, want EINVALID", err)
	}
}

// An injection cut by its limit counts what it passed over and moves the
// cursor past it; one below its limit, or exactly at it, passes over
// nothing.
func TestTakeInjectionLimit(t *testing.T) {
	h := newTestHub(t)
	as := h.agents(t, "ann", "bob")
	ann, bob := as[0], as[1]
	ctx := context.Background()
	post := func(n int) []int64 {
		var ids []int64
		for range n {
			ids = append(ids, h.post(t, ann, hub.PostRequest{To: []string{"bob"}, Body: "news"}).ID)
		}
		return ids
	}
	for _, tt := range []struct {
		posted, limit int
		taken         int
		more          int64
	}{
		{5, 2, 2, 3},
		{3, 3, 3, 0},
		{2, 4, 2, 0},
	} {
		ids := post(tt.posted)
		inj, err := h.Injections.TakeInjection(ctx, bob, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got := msgIDs(inj.Messages); len(got) != tt.taken || got[0] != ids[0] || inj.More != tt.more || inj.Cursor != ids[len(ids)-1] {
			t.Errorf("%d new, limit %d: injection %v, %d more, cursor %d; want the first %d of %v, %d more, cursor %d",
				tt.posted, tt.limit, got, inj.More, inj.Cursor, tt.taken, ids, tt.more, ids[len(ids)-1])
		}
		if inj, err := h.Injections.TakeInjection(ctx, bob, tt.limit); err != nil || len(inj.Messages) != 0 || inj.Cursor != ids[len(ids)-1] {
			t.Errorf("%d new, limit %d: the next injection = %+v, %v; want nothing, cursor %d", tt.posted, tt.limit, inj, err, ids[len(ids)-1])
		}
	}
}

// Messages a channel showed the agent since its last injection come first
// past its cursor: an injection reads on past them, so that what follows
// is injected and not passed over with them.
func TestTakeInjectionReadsPastWhatIsInContext(t *testing.T) {
	h := newTestHub(t)
	as := h.agents(t, "ann", "bob")
	ann, bob := as[0], as[1]
	ctx := context.Background()
	var shown []string
	for range 4 {
		shown = append(shown, strconv.FormatInt(h.post(t, ann, hub.PostRequest{To: []string{"bob"}, Body: "shown"}).ID, 10))
	}
	// Two written, two marked and not yet written.
	if err := h.Receipts.Confirm(ctx, bob, shown[:2], "channel"); err != nil {
		t.Fatal(err)
	}
	if err := h.Receipts.FlushDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Receipts.Confirm(ctx, bob, shown[2:], "channel"); err != nil {
		t.Fatal(err)
	}
	five := h.post(t, ann, hub.PostRequest{To: []string{"bob"}, Body: "not shown"})
	six := h.post(t, ann, hub.PostRequest{To: []string{"bob"}, Body: "not shown either"})
	inj, err := h.Injections.TakeInjection(ctx, bob, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgIDs(inj.Messages); len(got) != 2 || got[0] != five.ID || got[1] != six.ID || inj.More != 0 || inj.Cursor != six.ID {
		t.Errorf("injection %v, %d more, cursor %d; want %d and %d, none more, cursor %d (messages %v were in context)",
			got, inj.More, inj.Cursor, five.ID, six.ID, six.ID, shown)
	}
}
