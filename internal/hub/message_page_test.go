package hub_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// Large messages cut a page by bytes: every page stays under the bound,
// holds at least one message, says more follow, and following the cursor
// reads every message once.
func TestPageBoundedByBytes(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	const n = 80 // 80 × 60 KiB ≈ 4.7 MiB: more than a gRPC reply may carry
	body := strings.Repeat("x", 60<<10)
	for range n {
		h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: body})
	}
	ctx := context.Background()
	seen, pages, after := 0, 0, ""
	for {
		msgs, cursor, more, err := h.List(ctx, bob, hub.ListRequest{AfterID: after, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			t.Fatalf("page %d is empty (more=%v)", pages, more)
		}
		size := 0
		for _, m := range msgs {
			size += len(m.Body)
		}
		if size > hub.MaxPageBytes {
			t.Errorf("page %d carries %d bytes of bodies, over %d", pages, size, hub.MaxPageBytes)
		}
		seen += len(msgs)
		pages++
		after = hub.FormatMessageID(cursor)
		if !more {
			break
		}
	}
	if seen != n || pages < 2 {
		t.Errorf("read %d messages in %d pages, want %d in at least 2", seen, pages, n)
	}
	// The admin view pages the same way.
	msgs, _, more, err := h.AdminList(ctx, hub.AdminListRequest{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || len(msgs) == n || !more {
		t.Errorf("admin page: %d messages, more=%v; want a partial page with more", len(msgs), more)
	}
	// The admin's newest page too, ending with the newest message.
	msgs, _, more, err = h.AdminList(ctx, hub.AdminListRequest{Limit: 500, Newest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || len(msgs) == n || !more || msgs[len(msgs)-1].ID != h.maxMessageID(t) {
		t.Errorf("admin newest page: %d messages, more=%v; want a partial page ending with the newest", len(msgs), more)
	}
	// And a wait returns a bounded batch whose cursor moves on.
	r := h.mustWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(0), AfterID: "0", Limit: 500})
	if len(r.Messages) == 0 || len(r.Messages) == n {
		t.Errorf("wait returned %d messages, want a partial batch", len(r.Messages))
	}
}

// A cursor beyond the newest message is refused, not accepted to then
// skip every message up to it.
func TestCursorBeyondNewestRefused(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	as := h.agents(t, "alice", "bob")
	m := h.post(t, as[0], hub.PostRequest{To: []string{"bob"}, Body: "hi"})
	ctx := context.Background()
	beyond := hub.FormatMessageID(m.ID + 1000)
	_, _, _, err := h.List(ctx, as[1], hub.ListRequest{AfterID: beyond})
	wantCode(t, "list after a future ID", err, hub.EINVALID)
	_, _, _, err = h.AdminList(ctx, hub.AdminListRequest{AfterID: beyond})
	wantCode(t, "admin list after a future ID", err, hub.EINVALID)
	_, err = h.Wait(ctx, as[1], hub.WaitRequest{TimeoutSeconds: seconds(0), AfterID: beyond})
	wantCode(t, "wait after a future ID", err, hub.EINVALID)
	if _, _, _, err := h.List(ctx, as[1], hub.ListRequest{AfterID: hub.FormatMessageID(m.ID)}); err != nil {
		t.Errorf("list after the newest ID: %v", err)
	}
}
