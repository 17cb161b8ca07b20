package app_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestBudgetOverRESTAndGRPC: bad budgets are refused with 400 naming what
// is expected and change nothing; an agent cannot set one; a host's
// report past the limit opens a budget item and next_task hands the agent
// nothing until a person raises the budget from the inbox.
func TestBudgetOverRESTAndGRPC(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	tok := h.newAgent(t, "coder")
	for _, c := range []struct {
		body string
		code int
		text string
	}{
		{`{"agent":"coder"}`, 400, "a budget needs a limit: give usd_per_day, tokens_per_day or both"},
		{`{"agent":"coder","usd_per_day":-1}`, 400, "usd_per_day -1 is not an amount"},
		{`{"agent":"coder","tokens_per_day":"-5"}`, 400, "tokens_per_day -5 is negative"},
		{`{"agent":"coder","project":"default","usd_per_day":1}`, 400, "of an agent or of a project, not both"},
		{`{"usd_per_day":1}`, 400, "give agent (one agent) or project"},
		{`{"agent":"ghost","usd_per_day":1}`, 404, "ghost"},
		{`{"project":"nowhere","usd_per_day":1}`, 404, "nowhere"},
	} {
		if code, body, _ := h.do(t, "PUT", "/v1/admin/budgets", h.token, c.body); code != c.code || !strings.Contains(body, c.text) {
			t.Errorf("PUT %s: %d %s, want %d with %q", c.body, code, body, c.code, c.text)
		}
	}
	if code, body, _ := h.do(t, "PUT", "/v1/admin/budgets", tok, `{"agent":"coder","usd_per_day":100}`); code != 403 {
		t.Errorf("an agent's PUT: %d %s, want 403", code, body)
	}
	agentCtx := coreBearer(tok)
	if _, err := h.admin.SetBudget(agentCtx, &hubv1.SetBudgetRequest{Agent: "coder", UsdPerDay: 100}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("an agent's SetBudget: %v, want PermissionDenied", err)
	}
	if code, body, _ := h.do(t, "GET", "/v1/admin/budgets", h.token, ""); code != 200 || strings.Contains(body, "coder") {
		t.Fatalf("budgets after refusals: %d %s, want none", code, body)
	}

	if code, body, _ := h.do(t, "PUT", "/v1/admin/budgets", h.token, `{"agent":"coder","usd_per_day":0.01}`); code != 200 || !strings.Contains(body, `"state":"ok"`) {
		t.Fatalf("PUT a budget: %d %s", code, body)
	}
	if _, err := h.agent.CreateTask(h.adm, &hubv1.CreateTaskRequest{Task: &hubv1.TaskSpec{Title: "port the parser"}}); err != nil {
		t.Fatal(err)
	}
	// The host's api_request event reports $0.0134: past $0.01.
	export := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"claude-code"}}]},"scopeLogs":[{"logRecords":[
		{"timeUnixNano":"` + strconv.FormatInt(time.Now().UnixNano(), 10) + `","body":{"stringValue":"claude_code.api_request"},"attributes":[
		{"key":"event.name","value":{"stringValue":"api_request"}},{"key":"session.id","value":{"stringValue":"s-budget"}},
		{"key":"model","value":{"stringValue":"claude-sonnet-4-5"}},{"key":"cost_usd","value":{"stringValue":"0.0134"}},
		{"key":"input_tokens","value":{"stringValue":"100"}},{"key":"output_tokens","value":{"stringValue":"50"}}]}]}]}]}`
	if code, body := h.post(t, "/otlp/v1/logs", tok, "application/json", []byte(export), false); code != 200 {
		t.Fatalf("export: %d %s", code, body)
	}
	_, body, _ := h.do(t, "GET", "/v1/admin/budgets?agent=coder", h.token, "")
	if !strings.Contains(body, `"state":"reached"`) || !strings.Contains(body, `"spent_usd":0.0134`) {
		t.Errorf("GET the budget after the export: %s, want reached at $0.0134", body)
	}
	_, body, inbox := h.do(t, "GET", "/v1/admin/inbox?state=open", h.token, "")
	items, _ := inbox["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["kind"] != "budget" || items[0].(map[string]any)["agent"] != "coder" {
		t.Fatalf("inbox: %s, want one budget item naming coder", body)
	}
	id := items[0].(map[string]any)["id"].(string)
	if r, err := h.agent.NextTask(agentCtx, &hubv1.NextTaskRequest{}); err != nil || r.GetTask() != nil {
		t.Fatalf("NextTask over budget = %v, %v; want no task", r, err)
	}
	ms, err := h.agent.ListMessages(agentCtx, &hubv1.ListMessagesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var told bool
	for _, m := range ms.GetMessages() {
		told = told || strings.Contains(m.GetBody(), "Stop now")
	}
	if !told {
		t.Errorf("the agent's messages %v lack the stop", ms.GetMessages())
	}

	if code, body, _ := h.do(t, "POST", "/v1/admin/inbox/"+id+":answer", h.token, `{"decision":"raise"}`); code != 400 || !strings.Contains(body, "raise needs the new limit") {
		t.Errorf("raise without a limit: %d %s, want 400", code, body)
	}
	if code, body, _ := h.do(t, "POST", "/v1/admin/inbox/"+id+":answer", h.token, `{"decision":"raise","usd_per_day":1}`); code != 200 {
		t.Fatalf("raise: %d %s", code, body)
	}
	r, err := h.agent.NextTask(agentCtx, &hubv1.NextTaskRequest{})
	if err != nil || r.GetTask().GetTitle() != "port the parser" {
		t.Fatalf("NextTask after the raise = %v, %v; want the task", r, err)
	}

	if code, body, _ := h.do(t, "DELETE", "/v1/admin/budgets?agent=coder", h.token, ""); code != 200 {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if code, body, _ := h.do(t, "DELETE", "/v1/admin/budgets?agent=coder", h.token, ""); code != 404 || !strings.Contains(body, "agent coder has no budget") {
		t.Errorf("DELETE again: %d %s, want 404", code, body)
	}
	var list struct{ Budgets []any }
	_, body, _ = h.do(t, "GET", "/v1/admin/budgets", h.token, "")
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Budgets) != 0 {
		t.Errorf("budgets after the delete: %s", body)
	}
}
