package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// A body of thousands of @names is refused before the write transaction,
// with the limit in the message; at the limit it is accepted.
func TestMentionBombRefused(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.MaxMentions = 10 })
	as := h.agents(t, "alice", "bob")
	var b strings.Builder
	for i := range 9520 {
		fmt.Fprintf(&b, "@a%d ", i)
	}
	before := h.maxMessageID(t)
	_, err := h.Post(context.Background(), as[0], "", hub.PostRequest{To: []string{"bob"}, Body: b.String()})
	wantCode(t, "9,520 mentions", err, hub.EINVALID)
	if err != nil && !strings.Contains(err.Error(), "the limit is 10") {
		t.Errorf("error %q does not give the limit", err)
	}
	if h.maxMessageID(t) != before {
		t.Error("the refused post was stored")
	}
	ten := strings.Repeat("@bob ", 3) + "@a1 @a2 @a3 @a4 @a5 @a6 @a7 @a8 @a9"
	if _, err := h.Post(context.Background(), as[0], "", hub.PostRequest{To: []string{"bob"}, Body: ten}); err != nil {
		t.Errorf("10 distinct mentions: %v", err)
	}
}
