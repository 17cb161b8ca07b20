package app_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// A person made with projects reads, posts and answers in those projects
// only, at every door a person token opens (over real gRPC and HTTP): the
// inbox and its answers, the remembered allows, messages, the agents'
// overviews, projects, channels and the dashboard's stream. A person made
// without projects, as every person made before, sees every project.
func TestPersonActsOnlyInItsProjects(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	for _, p := range []string{"red", "blue"} {
		if _, err := h.admin.CreateProject(h.adm, &hubv1.CreateProjectRequest{Name: p}); err != nil {
			t.Fatal(err)
		}
	}
	ask := map[string]string{} // agent → its open question's ID
	for name, project := range map[string]string{"ann": "red", "bob": "blue"} {
		r, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: name, Project: project})
		if err != nil {
			t.Fatal(err)
		}
		q, err := h.agent.AskHuman(coreBearer(r.GetToken()), &hubv1.AskHumanRequest{Question: "ship " + project + "?", TimeoutSeconds: ptr(int32(0))})
		if err != nil {
			t.Fatal(err)
		}
		ask[name] = q.GetItem().GetId()
		if _, err := h.agent.PostMessage(h.adm, &hubv1.PostMessageRequest{To: []string{name}, Body: "hello " + project, Project: project}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.agent.PostMessage(h.adm, &hubv1.PostMessageRequest{Channel: "#" + project + "-ops", Body: "channel " + project, Project: project}); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := h.admin.CreatePerson(h.adm, &hubv1.CreatePersonRequest{Name: "nobody", Projects: []string{"green"}}); status.Code(err) != codes.NotFound {
		t.Errorf("a person of a project that does not exist: %v, want NotFound", err)
	}
	made, err := h.admin.CreatePerson(h.adm, &hubv1.CreatePersonRequest{Name: "pat", Projects: []string{"red"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := made.GetPerson().GetProjects(); len(got) != 1 || got[0] != "red" {
		t.Errorf("pat's projects = %v, want [red]", got)
	}
	pat := coreBearer(made.GetToken())
	all, err := h.admin.CreatePerson(h.adm, &hubv1.CreatePersonRequest{Name: "kim"})
	if err != nil {
		t.Fatal(err)
	}
	kim := coreBearer(all.GetToken())

	inbox, err := h.admin.ListInbox(pat, &hubv1.ListInboxRequest{})
	if err != nil || len(inbox.GetItems()) != 1 || inbox.GetItems()[0].GetAgent() != "ann" {
		t.Errorf("pat's inbox = %v, %v; want ann's question only", inbox.GetItems(), err)
	}
	if _, err := h.admin.ListInbox(pat, &hubv1.ListInboxRequest{Project: "blue"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("pat lists blue's inbox: %v, want PermissionDenied", err)
	}
	if inbox, err := h.admin.ListInbox(kim, &hubv1.ListInboxRequest{}); err != nil || len(inbox.GetItems()) != 2 {
		t.Errorf("kim's inbox = %v, %v; want both questions", inbox.GetItems(), err)
	}
	if _, err := h.admin.AnswerInboxItem(pat, &hubv1.AnswerInboxItemRequest{Id: ask["bob"], Answer: "yes"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("pat answers bob's question: %v, want PermissionDenied", err)
	}
	if _, err := h.admin.AnswerInboxItem(pat, &hubv1.AnswerInboxItemRequest{Id: ask["ann"], Answer: "yes"}); err != nil {
		t.Errorf("pat answers ann's question: %v", err)
	}

	msgs, err := h.agent.ListMessages(pat, &hubv1.ListMessagesRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs.GetMessages() {
		if strings.Contains(m.GetBody(), "blue") {
			t.Errorf("pat reads blue's message %q", m.GetBody())
		}
	}
	if len(msgs.GetMessages()) != 3 { // hello, #red-ops, pat's answer
		t.Errorf("pat reads %d messages, want red's 3: %v", len(msgs.GetMessages()), msgs.GetMessages())
	}
	if _, err := h.agent.ListMessages(pat, &hubv1.ListMessagesRequest{Agent: "bob"}); status.Code(err) != codes.NotFound {
		t.Errorf("pat reads bob's messages: %v, want NotFound", err)
	}
	if _, err := h.agent.ListMessages(pat, &hubv1.ListMessagesRequest{Channel: "#blue-ops", Project: "blue"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("pat reads #blue-ops: %v, want PermissionDenied", err)
	}
	if _, err := h.agent.PostMessage(pat, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "hi"}); status.Code(err) != codes.NotFound {
		t.Errorf("pat posts to bob: %v, want NotFound", err)
	}
	if _, err := h.agent.PostMessage(pat, &hubv1.PostMessageRequest{Channel: "#blue-ops", Project: "blue", Body: "hi"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("pat posts to #blue-ops: %v, want PermissionDenied", err)
	}
	if m, err := h.agent.PostMessage(pat, &hubv1.PostMessageRequest{To: []string{"ann"}, Body: "hi ann"}); err != nil || m.GetMessage().GetFrom() != "pat" {
		t.Errorf("pat posts to ann (pat's one project): %v, %v", m, err)
	}

	if os, err := h.admin.ListAgentOverviews(pat, &hubv1.ListAgentOverviewsRequest{}); err != nil || len(os.GetAgents()) != 1 || os.GetAgents()[0].GetAgent().GetName() != "ann" {
		t.Errorf("pat's agents = %v, %v; want ann only", os.GetAgents(), err)
	}
	if ps, err := h.admin.ListProjects(pat, &hubv1.ListProjectsRequest{}); err != nil || len(ps.GetProjects()) != 1 || ps.GetProjects()[0].GetName() != "red" {
		t.Errorf("pat's projects = %v, %v; want red only", ps.GetProjects(), err)
	}
	if cs, err := h.agent.ListChannels(pat, &hubv1.ListChannelsRequest{}); err != nil || len(cs.GetChannels()) != 1 || cs.GetChannels()[0].GetName() != "#red-ops" {
		t.Errorf("pat's channels = %v, %v; want #red-ops only", cs.GetChannels(), err)
	}

	// The stream's rows are every agent's: pat's stream carries none, and
	// pat's page reads the rows through the API.
	for tok, want := range map[string]string{made.GetToken(): `"deltas":false`, all.GetToken(): `"deltas":true`} {
		req, _ := http.NewRequest("GET", h.base+"/v1/admin/stream", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("stream: %v, %v", res, err)
		}
		lines := bufio.NewScanner(res.Body)
		for lines.Scan() && !strings.HasPrefix(lines.Text(), "data: ") {
		}
		if !strings.Contains(lines.Text(), want) {
			t.Errorf("stream's hello = %q, want %s", lines.Text(), want)
		}
		res.Body.Close()
	}
}

// A person of several projects who posts with to only posts in the
// project of the agents named; agents of two projects, or none to tell
// the project by, are refused with the projects to choose from, and
// nothing is posted. It used to post in the default project, outside the
// person's: PermissionDenied.
func TestPersonOfSeveralProjectsPostsInTheRecipientsProject(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	for _, p := range []string{"red", "blue", "green"} {
		if _, err := h.admin.CreateProject(h.adm, &hubv1.CreateProjectRequest{Name: p}); err != nil {
			t.Fatal(err)
		}
	}
	for name, project := range map[string]string{"ann": "red", "bob": "blue", "cid": "green"} {
		if _, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: name, Project: project}); err != nil {
			t.Fatal(err)
		}
	}
	made, err := h.admin.CreatePerson(h.adm, &hubv1.CreatePersonRequest{Name: "pat", Projects: []string{"red", "blue"}})
	if err != nil {
		t.Fatal(err)
	}
	pat := coreBearer(made.GetToken())

	for to, project := range map[string]string{"ann": "red", "bob": "blue"} {
		m, err := h.agent.PostMessage(pat, &hubv1.PostMessageRequest{To: []string{to, "operator"}, Body: "hi " + to})
		if err != nil || m.GetMessage().GetProject() != project {
			t.Errorf("pat posts to %s: %v, %v; want the message in %s", to, m.GetMessage(), err, project)
		}
	}
	for _, c := range []struct {
		to   []string
		code codes.Code
		says []string
	}{
		{[]string{"ann", "bob"}, codes.InvalidArgument, []string{"red", "blue", "give project"}},
		{[]string{"operator"}, codes.InvalidArgument, []string{"red", "blue", "give project"}},
		{[]string{"cid"}, codes.NotFound, []string{"cid"}},
	} {
		_, err := h.agent.PostMessage(pat, &hubv1.PostMessageRequest{To: c.to, Body: "refused"})
		if status.Code(err) != c.code {
			t.Errorf("pat posts to %v: %v, want %s", c.to, err, c.code)
			continue
		}
		for _, w := range c.says {
			if !strings.Contains(status.Convert(err).Message(), w) {
				t.Errorf("pat posts to %v: %q does not say %q", c.to, status.Convert(err).Message(), w)
			}
		}
	}
	msgs, err := h.agent.ListMessages(h.adm, &hubv1.ListMessagesRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs.GetMessages() {
		if m.GetBody() == "refused" {
			t.Errorf("a refused post was stored: %v", m)
		}
	}
}

// The hub's counts a person of some projects reads (GetHubInfo's agents
// and parked waits) are those of the person's projects; a person of every
// project and the admin read the hub's. They used to be the hub's for
// every person.
func TestHubInfoCountsWhatThePersonSees(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	for _, p := range []string{"red", "blue"} {
		if _, err := h.admin.CreateProject(h.adm, &hubv1.CreateProjectRequest{Name: p}); err != nil {
			t.Fatal(err)
		}
	}
	tokens := map[string]string{}
	for name, project := range map[string]string{"ann": "red", "bob": "blue", "bea": "blue"} {
		r, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: name, Project: project})
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = r.GetToken()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, name := range []string{"bob", "bea"} { // two waits parked in blue
		go h.agent.WaitForMessages(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tokens[name]), &hubv1.WaitForMessagesRequest{TimeoutSeconds: ptr(int32(60))})
	}
	if !eventually(10*time.Second, func() bool { return h.m.Services.Core.ParkedWaits() == 2 }) {
		t.Fatal("the two waits did not park within 10 s")
	}
	person := func(name string, projects ...string) context.Context {
		r, err := h.admin.CreatePerson(h.adm, &hubv1.CreatePersonRequest{Name: name, Projects: projects})
		if err != nil {
			t.Fatal(err)
		}
		return coreBearer(r.GetToken())
	}
	for _, c := range []struct {
		who            string
		ctx            context.Context
		agents, parked int64
	}{
		{"pat (red)", person("pat", "red"), 1, 0},
		{"lee (blue)", person("lee", "blue"), 2, 2},
		{"kim (every project)", person("kim"), 3, 2},
		{"the admin", h.adm, 3, 2},
	} {
		info, err := h.admin.GetHubInfo(c.ctx, &hubv1.GetHubInfoRequest{})
		if err != nil || info.GetAgents() != c.agents || info.GetParkedWaiters() != c.parked {
			t.Errorf("%s reads %d agents and %d parked waits (%v), want %d and %d", c.who, info.GetAgents(), info.GetParkedWaiters(), err, c.agents, c.parked)
		}
	}
}

// A person of some projects revokes the remembered allows of those
// projects only, over REST as the dashboard does: another project's rule
// is refused (403) and stays in force, an unknown one is not found (404),
// and the person's own project's rule is revoked.
func TestPersonRevokesOnlyItsProjectsRules(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	rule := map[string]string{} // project → its rule's ID
	for name, project := range map[string]string{"ann": "red", "bob": "blue"} {
		if _, err := h.admin.CreateProject(h.adm, &hubv1.CreateProjectRequest{Name: project}); err != nil {
			t.Fatal(err)
		}
		r, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: name, Project: project})
		if err != nil {
			t.Fatal(err)
		}
		asked := make(chan error, 1)
		go func() {
			_, err := h.agent.RequestApproval(coreBearer(r.GetToken()), &hubv1.RequestApprovalRequest{Tool: "Bash", Input: `{"command":"make test"}`, WaitSeconds: 20})
			asked <- err
		}()
		if !eventually(10*time.Second, func() bool {
			open, err := h.admin.ListInbox(h.adm, &hubv1.ListInboxRequest{State: "open", Project: project})
			if err != nil || len(open.GetItems()) == 0 {
				return false
			}
			_, err = h.admin.AnswerInboxItem(h.adm, &hubv1.AnswerInboxItemRequest{Id: open.GetItems()[0].GetId(), Decision: "allow", Remember: "project"})
			return err == nil
		}) {
			t.Fatalf("%s's approval was not in the inbox within 10 s", name)
		}
		if err := <-asked; err != nil {
			t.Fatal(err)
		}
		rs, err := h.admin.ListApprovalRules(h.adm, &hubv1.ListApprovalRulesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs.GetRules() {
			if r.GetProject() == project {
				rule[project] = r.GetId()
			}
		}
		if rule[project] == "" {
			t.Fatalf("no rule remembered for %s: %v", project, rs.GetRules())
		}
	}
	made, err := h.admin.CreatePerson(h.adm, &hubv1.CreatePersonRequest{Name: "pat", Projects: []string{"red"}})
	if err != nil {
		t.Fatal(err)
	}
	pat := made.GetToken()
	revoked := func(project string) bool {
		rs, err := h.admin.ListApprovalRules(h.adm, &hubv1.ListApprovalRulesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs.GetRules() {
			if r.GetId() == rule[project] {
				return r.GetRevokedAt() != nil
			}
		}
		return true // gone from the list: no longer in force
	}

	if code, body, _ := h.do(t, "GET", "/v1/admin/inbox/rules", pat, ""); code != http.StatusOK || strings.Contains(body, `"blue"`) || !strings.Contains(body, `"red"`) {
		t.Errorf("pat lists the rules: %d %s; want red's only", code, body)
	}
	if code, body, _ := h.do(t, "DELETE", "/v1/admin/inbox/rules/"+rule["blue"], pat, ""); code != http.StatusForbidden || !strings.Contains(body, "blue") {
		t.Errorf("pat revokes blue's rule: %d %s; want 403 naming blue", code, body)
	}
	if revoked("blue") {
		t.Error("blue's rule was revoked by a person of red")
	}
	if code, body, _ := h.do(t, "DELETE", "/v1/admin/inbox/rules/999", pat, ""); code != http.StatusNotFound {
		t.Errorf("pat revokes rule 999: %d %s; want 404", code, body)
	}
	if code, body, _ := h.do(t, "DELETE", "/v1/admin/inbox/rules/"+rule["red"], pat, ""); code != http.StatusOK {
		t.Errorf("pat revokes red's rule: %d %s; want 200", code, body)
	}
	if !revoked("red") || revoked("blue") {
		t.Errorf("after pat's revocations: red's rule revoked %v (want true), blue's %v (want false)", revoked("red"), revoked("blue"))
	}
}
