package hub_test

import (
	"context"
	"slices"
	"testing"
	"time"
)

// The list of who is online in a status is made at most once a second of
// the hub's clock, whatever the callers' own times.
func TestStatusOnlineListMadeOncePerSecond(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newTestHub(t)
	a, _ := h.agent(t, "alice")
	st, err := h.Status(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Online, []string{"alice"}) {
		t.Fatalf("online = %v, want alice", st.Online)
	}
	h.agent(t, "bob") // a call of bob's, within the second
	if st, _ = h.Status(ctx, a); !slices.Equal(st.Online, []string{"alice"}) {
		t.Errorf("within the second: online = %v, want the list made at its start", st.Online)
	}
	h.Clock.Advance(time.Second)
	if st, _ = h.Status(ctx, a); !slices.Equal(st.Online, []string{"alice", "bob"}) {
		t.Errorf("a second later: online = %v, want alice and bob", st.Online)
	}
}
