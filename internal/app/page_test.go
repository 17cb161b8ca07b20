package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// One agent's large messages do not break listing for anyone: the REST
// list and the admin list answer with a partial page and a cursor, where
// they used to exceed the in-process gRPC reply limit (4 MiB).
func TestLargeMessagesPage(t *testing.T) {
	t.Parallel()
	m := relHub(t, nil)
	tok := relCreateAgent(t, m, "big")
	relCreateAgent(t, m, "reader")
	agent := hubv1.NewAgentServiceClient(m.Conn())
	body := strings.Repeat("y", 60<<10)
	for range 80 { // ≈ 4.7 MiB in all
		if _, err := agent.PostMessage(bearer(context.Background(), tok), &hubv1.PostMessageRequest{To: []string{"reader"}, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+m.HTTPAddress()+"/v1/admin/messages?limit=500", nil)
	req.Header.Set("Authorization", "Bearer "+relAdminToken(t, m))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var page struct {
		Messages []json.RawMessage `json:"messages"`
		Cursor   string            `json:"cursor"`
		More     bool              `json:"has_more"`
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/admin/messages: HTTP %d, %v", res.StatusCode, err)
	}
	if len(page.Messages) == 0 || len(page.Messages) == 80 || !page.More || page.Cursor == "" {
		t.Errorf("page of %d messages, more=%v, cursor %q; want a partial page with more and a cursor", len(page.Messages), page.More, page.Cursor)
	}
	admin := hubv1.NewAgentServiceClient(m.Conn())
	seen, after := 0, ""
	for i := 0; i < 80; i++ {
		r, err := admin.ListMessages(bearer(context.Background(), relAdminToken(t, m)), &hubv1.ListMessagesRequest{Limit: 500, AfterId: after})
		if err != nil {
			t.Fatalf("admin list after %q: %v", after, err)
		}
		seen += len(r.GetMessages())
		after = r.GetCursor()
		if !r.GetHasMore() {
			break
		}
	}
	if seen != 80 {
		t.Errorf("following the cursor read %d messages, want 80", seen)
	}
}
