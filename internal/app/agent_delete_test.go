package app_test

import (
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DELETE /v1/admin/agents/{name} over the real HTTP and gRPC listeners:
// refused (nothing deleted) for an agent token, a bad name, an unknown
// agent and an enabled one; then it deletes the disabled agent and the
// messages it sent, while the messages it received stay for their sender,
// records an agent_deleted event, and the name registers an empty agent.
func TestDeleteAgentOverREST(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	bobTok, carolTok := h.newAgent(t, "bob"), h.newAgent(t, "carol")
	if _, err := h.agent.PostMessage(coreBearer(bobTok), &hubv1.PostMessageRequest{To: []string{"carol"}, Body: "from bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.agent.PostMessage(coreBearer(carolTok), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "from carol"}); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		what, name, token string
		code              int
		says              string
	}{
		{"an agent's token", "bob", carolTok, 403, "admin token"},
		{"a bad name", "Bob!", h.token, 400, "invalid"},
		{"an unknown agent", "nobody", h.token, 404, "nobody"},
		{"an enabled agent", "bob", h.token, 400, "hubctl agent disable bob"},
	} {
		code, body, _ := h.do(t, "DELETE", "/v1/admin/agents/"+tt.name, tt.token, "")
		if code != tt.code || !strings.Contains(body, tt.says) {
			t.Errorf("DELETE %s with %s = %d %s; want %d saying %q", tt.name, tt.what, code, body, tt.code, tt.says)
		}
	}
	if agents, messages := h.counts(t); agents != 2 || messages != 2 {
		t.Fatalf("after the refusals: %d agents, %d messages; want 2 and 2", agents, messages)
	}

	if _, err := h.admin.DisableAgent(h.adm, &hubv1.DisableAgentRequest{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	code, body, v := h.do(t, "DELETE", "/v1/admin/agents/bob", h.token, "")
	if code != 200 || v["messages_deleted"] != "1" {
		t.Fatalf("DELETE bob = %d %s; want 200 with messages_deleted 1", code, body)
	}
	if _, err := h.admin.GetAgent(h.adm, &hubv1.GetAgentRequest{Name: "bob"}); status.Code(err) != codes.NotFound {
		t.Errorf("GetAgent(bob) after the deletion: %v, want NotFound", err)
	}
	ms, err := h.agent.ListMessages(h.adm, &hubv1.ListMessagesRequest{Limit: 10})
	if err != nil || len(ms.GetMessages()) != 1 || ms.GetMessages()[0].GetBody() != "from carol" {
		t.Errorf("messages after the deletion = %v, %v; want carol's only", ms.GetMessages(), err)
	}
	if _, body, _ := h.do(t, "GET", "/v1/admin/events?kind=agent_deleted", h.token, ""); !strings.Contains(body, `\"bob\"`) {
		t.Errorf("events of kind agent_deleted = %s; want one naming bob", body)
	}

	newTok := h.newAgent(t, "bob")
	if _, body, _ := h.do(t, "GET", "/v1/messages?limit=10", newTok, ""); strings.Contains(body, "from carol") {
		t.Errorf("the new bob sees the old bob's inbox: %s", body)
	}
	if _, err := h.agent.GetStatus(coreBearer(bobTok), &hubv1.GetStatusRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("the old bob's token: %v, want Unauthenticated", err)
	}
}
