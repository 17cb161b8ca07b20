package gateway

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
)

// TestRoutesFindTheRPC: the guard learns a REST request's RPC from the
// gateway's own routing, so an admin alias of an agent's call admits as
// that call, not by its /v1/admin/ prefix, and every route of the API
// leads to an RPC that declares its admission.
func TestRoutesFindTheRPC(t *testing.T) {
	t.Parallel()
	rt, err := newRoutes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ verb, path, want string }{
		{"POST", "/v1/messages", hubv1.AgentService_PostMessage_FullMethodName},
		{"GET", "/v1/tasks/7", hubv1.AgentService_GetTask_FullMethodName},
		{"GET", "/v1/admin/tasks/7", hubv1.AgentService_GetTask_FullMethodName},
		{"GET", "/v1/admin/messages/12/receipts", hubv1.AgentService_GetMessageReceipts_FullMethodName},
		{"POST", "/v1/agents:join", hubv1.AgentService_JoinHub_FullMethodName},
		{"POST", "/v1/channels:join", hubv1.AgentService_JoinChannel_FullMethodName},
		{"GET", "/v1/admin/inbox", hubv1.AdminService_ListInbox_FullMethodName},
		{"POST", "/v1/admin/agents", hubv1.AdminService_CreateAgent_FullMethodName},
		{"GET", "/v1/admin/agents/alice", hubv1.AdminService_GetAgent_FullMethodName},
		{"GET", "/v1/nowhere", ""},
		{"DELETE", "/v1/messages", ""},
	} {
		r := httptest.NewRequest(c.verb, c.path, strings.NewReader(`{"body":"not read"}`))
		r.Header.Set("Authorization", "Bearer whatever")
		if got := rt.method(r); got != c.want {
			t.Errorf("%s %s: RPC %q, want %q", c.verb, c.path, got, c.want)
		}
		if c.want == "" {
			continue
		}
		if _, ok := admission.Lookup(c.want); !ok {
			t.Errorf("%s %s: %s declares no admission", c.verb, c.path, c.want)
		}
		if b := make([]byte, 4); func() bool { n, _ := r.Body.Read(b); return n == 0 }() {
			t.Errorf("%s %s: finding the route read the body", c.verb, c.path)
		}
	}
	rule, _ := admission.Lookup(rt.method(httptest.NewRequest("GET", "/v1/admin/tasks/7", nil)))
	if !rule.Who.Has(admission.Agent) || !rule.Who.Has(admission.Admin) {
		t.Errorf("GET /v1/admin/tasks/7 admits %v, want an agent or the admin (one RPC behind both paths)", rule.Who)
	}
}
