package app_test

import (
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestProjectIsolationEndToEnd: an agent of red against blue over real
// gRPC and REST, before a link (nothing of blue exists for it), with one
// (its agents and channels may be messaged, nothing else) and after the
// unlink; and the admin's ?project= filters.
func TestProjectIsolationEndToEnd(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	for _, p := range []string{"red", "blue"} {
		if code, body, _ := h.do(t, "POST", "/v1/admin/projects", h.token, `{"name":"`+p+`"}`); code != 200 {
			t.Fatalf("create project %s: %d %s", p, code, body)
		}
	}
	r, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: "r1", Project: "red"})
	if err != nil {
		t.Fatal(err)
	}
	red, redCtx := r.GetToken(), coreBearer(r.GetToken())
	_, _, v := h.do(t, "POST", "/v1/admin/agents", h.token, `{"name":"b1","project":"blue"}`)
	blue, _ := v["token"].(string)
	if blue == "" {
		t.Fatalf("create b1 over REST: %v", v)
	}
	if code, body, _ := h.do(t, "POST", "/v1/messages", blue, `{"channel":"#general","body":"blue secret"}`); code != 200 {
		t.Fatalf("b1 posts: %d %s", code, body)
	}
	if code, body, _ := h.do(t, "POST", "/v1/reservations", blue, `{"paths":["src"]}`); code != 200 {
		t.Fatalf("b1 reserves: %d %s", code, body)
	}

	grpcPost := func(to string) codes.Code {
		_, err := h.agent.PostMessage(redCtx, &hubv1.PostMessageRequest{To: []string{to}, Body: "hi " + to})
		return status.Code(err)
	}
	restCode := func(method, path, body string) (int, string) {
		code, got, _ := h.do(t, method, path, red, body)
		return code, got
	}
	check := func(stage string, linked bool) {
		t.Helper()
		wantPost, wantHTTP := codes.NotFound, 404
		if linked {
			wantPost, wantHTTP = codes.OK, 200
		}
		if got := grpcPost("b1"); got != wantPost {
			t.Errorf("%s: gRPC post to b1 = %v, want %v", stage, got, wantPost)
		}
		if code, body := restCode("POST", "/v1/messages", `{"to":["b1"],"body":"over REST"}`); code != wantHTTP {
			t.Errorf("%s: REST post to b1 = %d %s, want %d", stage, code, body, wantHTTP)
		}
		if code, body := restCode("POST", "/v1/messages", `{"channel":"blue/#general","body":"to blue's room"}`); code != wantHTTP {
			t.Errorf("%s: REST post to blue/#general = %d %s, want %d", stage, code, body, wantHTTP)
		}
		if code, body := restCode("POST", "/v1/channels:join", `{"channel":"blue/#general"}`); code != 403 {
			t.Errorf("%s: join blue/#general = %d %s, want 403", stage, code, body)
		}
		if _, body := restCode("GET", "/v1/peers", ""); strings.Contains(body, `"b1"`) != linked {
			t.Errorf("%s: peers = %s; b1 listed should be %v", stage, body, linked)
		}
		if _, body := restCode("GET", "/v1/channels", ""); strings.Contains(body, `"blue/#general"`) != linked {
			t.Errorf("%s: channels = %s; blue/#general listed should be %v", stage, body, linked)
		}
		// Never, link or not: blue's reservations, messages, history.
		if code, body := restCode("GET", "/v1/reservations", ""); code != 200 || strings.Contains(body, "b1") {
			t.Errorf("%s: reservations = %d %s, want none of b1's", stage, code, body)
		}
		if code, body := restCode("GET", "/v1/reservations?agent=b1", ""); code != 404 {
			t.Errorf("%s: reservations?agent=b1 = %d %s, want 404", stage, code, body)
		}
		ms, err := h.agent.ListMessages(redCtx, &hubv1.ListMessagesRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms.GetMessages() {
			if m.GetBody() == "blue secret" {
				t.Errorf("%s: r1 reads blue's channel message", stage)
			}
		}
	}
	check("unlinked", false)
	// Projects reserve apart: r1 gets src exclusively beside b1.
	if code, body := restCode("POST", "/v1/reservations", `{"paths":["src"]}`); code != 200 || strings.Contains(body, "conflicts\":[{") {
		t.Errorf("r1 reserves src = %d %s, want it granted without conflicts", code, body)
	}

	if code, body, _ := h.do(t, "POST", "/v1/admin/projects/red/links", h.token, `{"other":"blue"}`); code != 200 {
		t.Fatalf("link: %d %s", code, body)
	}
	check("linked", true)
	if _, body, _ := h.do(t, "GET", "/v1/messages?limit=100", blue, ""); !strings.Contains(body, "to blue's room") || !strings.Contains(body, `"project":"blue"`) {
		t.Errorf("b1's inbox lacks r1's post to blue/#general: %s", body)
	}

	// The admin filters by project.
	if _, body, _ := h.do(t, "GET", "/v1/admin/agents?project=blue", h.token, ""); !strings.Contains(body, `"b1"`) || strings.Contains(body, `"r1"`) {
		t.Errorf("admin agents?project=blue = %s", body)
	}
	if _, body, _ := h.do(t, "GET", "/v1/admin/messages?project=red&limit=100", h.token, ""); strings.Contains(body, "blue secret") || !strings.Contains(body, "hi b1") {
		t.Errorf("admin messages?project=red = %s", body)
	}
	if _, body, _ := h.do(t, "GET", "/v1/admin/reservations?project=blue", h.token, ""); !strings.Contains(body, "b1") || strings.Contains(body, "r1") {
		t.Errorf("admin reservations?project=blue = %s", body)
	}
	if _, body, _ := h.do(t, "GET", "/v1/admin/projects", h.token, ""); !strings.Contains(strings.ReplaceAll(body, " ", ""), `"name":"red","created_at"`) ||
		!strings.Contains(body, `"links":["blue"]`) {
		t.Errorf("admin projects = %s", body)
	}

	if code, body, _ := h.do(t, "DELETE", "/v1/admin/projects/blue/links/red", h.token, ""); code != 200 {
		t.Fatalf("unlink: %d %s", code, body)
	}
	check("unlinked again", false)
}
