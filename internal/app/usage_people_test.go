package app_test

import (
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestPersonReadsSpendOfItsProjects: a person made with a project reads the
// usage and the budgets of that project's agents (over gRPC and REST),
// is refused another project's, and may not set or delete a budget; the
// admin reads everything.
func TestPersonReadsSpendOfItsProjects(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	for _, p := range []string{"red", "blue"} {
		if _, err := h.admin.CreateProject(h.adm, &hubv1.CreateProjectRequest{Name: p}); err != nil {
			t.Fatal(err)
		}
	}
	for name, project := range map[string]string{"ann": "red", "bob": "blue"} {
		r, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: name, Project: project})
		if err != nil {
			t.Fatal(err)
		}
		body := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"claude-code"}}]},"scopeLogs":[{"logRecords":[
			{"body":{"stringValue":"claude_code.api_request"},"attributes":[{"key":"event.name","value":{"stringValue":"api_request"}},
			{"key":"session.id","value":{"stringValue":"s-` + name + `"}},{"key":"model","value":{"stringValue":"m"}},
			{"key":"input_tokens","value":{"intValue":"10"}},{"key":"cost_usd","value":{"doubleValue":0.5}}]}]}]}]}`
		if code, got := h.post(t, "/otlp/v1/logs", r.GetToken(), "application/json", []byte(body), false); code != 200 {
			t.Fatalf("export of %s: %d %s", name, code, got)
		}
		if _, err := h.admin.SetBudget(h.adm, &hubv1.SetBudgetRequest{Project: project, UsdPerDay: 10}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.admin.SetBudget(h.adm, &hubv1.SetBudgetRequest{Agent: name, UsdPerDay: 5}); err != nil {
			t.Fatal(err)
		}
	}
	made, err := h.admin.CreatePerson(h.adm, &hubv1.CreatePersonRequest{Name: "pat", Projects: []string{"red"}})
	if err != nil {
		t.Fatal(err)
	}
	pat := coreBearer(made.GetToken())

	u, err := h.admin.ListUsage(pat, &hubv1.ListUsageRequest{})
	if err != nil || len(u.GetRows()) != 1 || u.GetRows()[0].GetAgent() != "ann" || u.GetRows()[0].GetInputTokens() != 10 {
		t.Errorf("pat's usage = %v, %v; want ann's 10 input tokens only", u.GetRows(), err)
	}
	if u, err := h.admin.ListUsage(pat, &hubv1.ListUsageRequest{Agent: "ann", GroupBy: "project"}); err != nil || len(u.GetRows()) != 1 || u.GetRows()[0].GetProject() != "red" {
		t.Errorf("pat's usage of ann = %v, %v; want red's row", u.GetRows(), err)
	}
	if _, err := h.admin.ListUsage(pat, &hubv1.ListUsageRequest{Agent: "bob"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("pat reads bob's usage: %v, want PermissionDenied", err)
	}
	b, err := h.admin.ListBudgets(pat, &hubv1.ListBudgetsRequest{})
	if err != nil || len(b.GetBudgets()) != 2 || b.GetBudgets()[0].GetProject() != "red" || b.GetBudgets()[1].GetAgent() != "ann" {
		t.Errorf("pat's budgets = %v, %v; want red's and ann's", b.GetBudgets(), err)
	}
	for _, req := range []*hubv1.ListBudgetsRequest{{Project: "blue"}, {Agent: "bob"}} {
		if _, err := h.admin.ListBudgets(pat, req); status.Code(err) != codes.PermissionDenied {
			t.Errorf("pat reads the budget %v: %v, want PermissionDenied", req, err)
		}
	}
	if _, err := h.admin.SetBudget(pat, &hubv1.SetBudgetRequest{Project: "red", UsdPerDay: 100}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("pat sets a budget: %v, want PermissionDenied", err)
	}
	if _, err := h.admin.DeleteBudget(pat, &hubv1.DeleteBudgetRequest{Agent: "ann"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("pat deletes a budget: %v, want PermissionDenied", err)
	}
	// Over REST the same: the dashboard's spend view reads these.
	if code, body, _ := h.do(t, "GET", "/v1/admin/usage?agent=bob", made.GetToken(), ""); code != 403 {
		t.Errorf("pat's GET /v1/admin/usage?agent=bob: %d %s, want 403", code, body)
	}
	if code, body, _ := h.do(t, "GET", "/v1/admin/budgets", made.GetToken(), ""); code != 200 {
		t.Errorf("pat's GET /v1/admin/budgets: %d %s, want 200", code, body)
	}
	if code, body, _ := h.do(t, "PUT", "/v1/admin/budgets", made.GetToken(), `{"project":"red","usd_per_day":1}`); code != 403 {
		t.Errorf("pat's PUT /v1/admin/budgets: %d %s, want 403", code, body)
	}
	if u, err := h.admin.ListUsage(h.adm, &hubv1.ListUsageRequest{}); err != nil || len(u.GetRows()) != 2 {
		t.Errorf("the admin's usage = %v, %v; want both agents", u.GetRows(), err)
	}
}
