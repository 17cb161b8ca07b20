package app_test

import (
	"context"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// reachMarkers are the names and texts of project "default" in
// TestRepliesStayInReach: an agent of another project, not linked to it,
// must never read one of them in a reply or an error.
var reachMarkers = []string{"alice-home", "bob-home", "#home-ops", "secretbody", "secretdir"}

// reachRequests adapt validRequests for the outsider: they name nothing of
// project "default" (an error that repeats a name the caller gave is no
// leak), so any marker in a reply came from the hub.
var reachRequests = map[string]string{
	"AgentService.PostMessage":     `{"to":["out-peer"],"body":"hello from outside"}`,
	"AgentService.JoinChannel":     `{"channel":"#out-ops"}`,
	"AgentService.LeaveChannel":    `{"channel":"#out-ops"}`,
	"AgentService.ReservePaths":    `{"paths":["outdir/"]}`,
	"AgentService.SearchMessages":  `{"query":"zebracorn"}`,
	"AgentService.ListMessages":    `{"after_id":"0"}`,
	"AgentService.RequestApproval": `{"tool":"Bash","input":"{\"command\":\"ls\"}","wait_seconds":1}`,
}

// TestRepliesStayInReach calls every RPC of the agent service (walking
// the service descriptor, so a new RPC is covered without being listed)
// as an agent of project "outside", while project "default" has agents
// online and waiting, a channel, messages and reservations, and fails if a
// reply or an error names any of them. IDs of default's messages are
// given where a request takes one (1, 2): the answer must not say what
// they hold.
func TestRepliesStayInReach(t *testing.T) {
	m := relHub(t, func(m *app.Main) { m.RateLimit.PerSecond = 0 })
	ctx := context.Background()
	admin := hubv1.NewAdminServiceClient(m.Conn())
	actx := bearer(ctx, relAdminToken(t, m))
	if _, err := admin.CreateProject(actx, &hubv1.CreateProjectRequest{Name: "outside"}); err != nil {
		t.Fatal(err)
	}
	newAgent := func(name, project string) string {
		r, err := admin.CreateAgent(actx, &hubv1.CreateAgentRequest{Name: name, Project: project})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetToken()
	}
	aliceTok, bobTok := newAgent("alice-home", ""), newAgent("bob-home", "")
	outTok := newAgent("outsider", "outside")
	newAgent("out-peer", "outside")

	conn := relDial(t, m)
	agent := hubv1.NewAgentServiceClient(conn)
	alice, bob := bearer(ctx, aliceTok), bearer(ctx, bobTok)
	if _, err := agent.PostMessage(alice, &hubv1.PostMessageRequest{To: []string{"bob-home"}, Body: "secretbody zebracorn for bob-home", AckRequired: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.PostMessage(alice, &hubv1.PostMessageRequest{Channel: "#home-ops", Body: "secretbody zebracorn @bob-home"}); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.ReservePaths(alice, &hubv1.ReservePathsRequest{Paths: []string{"secretdir/"}, Reason: "secretbody"}); err != nil {
		t.Fatal(err)
	}
	// Task 1 held by alice, task 2 ready: the outsider's task calls name
	// them by ID, and its next_task must not take task 2.
	held, err := agent.CreateTask(alice, &hubv1.CreateTaskRequest{Task: &hubv1.TaskSpec{Title: "secretbody parser", Labels: []string{"secretdir"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.ClaimTask(alice, &hubv1.ClaimTaskRequest{Id: held.GetTask().GetId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.CreateTask(alice, &hubv1.CreateTaskRequest{Task: &hubv1.TaskSpec{Title: "secretbody lexer", Paths: []string{"secretdir/lexer"}}}); err != nil {
		t.Fatal(err)
	}
	// The inbox of default: an open question of alice's, and her Bash
	// call allowed and remembered for all of default.
	if _, err := agent.AskHuman(alice, &hubv1.AskHumanRequest{Question: "secretbody: which zebracorn?", TimeoutSeconds: proto.Int32(0)}); err != nil {
		t.Fatal(err)
	}
	asked := make(chan error, 1)
	go func() {
		_, err := agent.RequestApproval(alice, &hubv1.RequestApprovalRequest{Tool: "Bash", Input: `{"command":"secretbody"}`, WaitSeconds: 20})
		asked <- err
	}()
	for answered := false; !answered; {
		open, err := admin.ListInbox(actx, &hubv1.ListInboxRequest{State: "open"})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range open.GetItems() {
			if it.GetKind() == "approval" {
				if _, err := admin.AnswerInboxItem(actx, &hubv1.AnswerInboxItemRequest{Id: it.GetId(), Decision: "allow", Remember: "project"}); err != nil {
					t.Fatal(err)
				}
				answered = true
			}
		}
	}
	if err := <-asked; err != nil {
		t.Fatal(err)
	}
	// bob waits (presence "waiting"); alice has just called (active).
	waitCtx, stopWait := context.WithCancel(bob)
	defer stopWait()
	if _, err := agent.MarkRead(bob, &hubv1.MarkReadRequest{UpToId: "2"}); err != nil {
		t.Fatal(err)
	}
	go agent.WaitForMessages(waitCtx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
	within(t, "bob's wait parked", func() bool { return m.Services.Core.ParkedWaits() > 0 })
	if _, err := agent.GetStatus(alice, &hubv1.GetStatusRequest{}); err != nil {
		t.Fatal(err)
	}
	// The markers are there to be seen by an agent of default: the check
	// below can fail.
	if st, err := agent.GetStatus(alice, &hubv1.GetStatusRequest{}); err != nil || !strings.Contains(protojson.Format(st), "bob-home") {
		t.Fatalf("alice's status = %v, %v; want bob-home listed (online in her own project)", st, err)
	}

	out := bearer(ctx, outTok)
	calls := 0
	for _, r := range apiRPCs(t) {
		if r.service != "AgentService" || r.name == "JoinHub" { // JoinHub acts for no agent
			continue
		}
		reqJSON, ok := reachRequests[r.key()]
		if !ok {
			reqJSON = validRequests[r.key()]
		}
		for _, marker := range reachMarkers {
			if strings.Contains(reqJSON, marker) {
				t.Fatalf("the request of %s names %q: it must name nothing of default", r.key(), marker)
			}
		}
		req, resp := newMsg(r.desc.Input()), newMsg(r.desc.Output())
		if err := protojson.Unmarshal([]byte(reqJSON), req); err != nil {
			t.Fatalf("request of %s: %v", r.key(), err)
		}
		err := callRPC(out, conn, r, req, resp)
		seen := status.Convert(err).Message()
		if err == nil {
			seen = protojson.Format(resp)
		}
		calls++
		for _, marker := range reachMarkers {
			if strings.Contains(seen, marker) {
				t.Errorf("%s as an agent of another project names %q: %s", r.key(), marker, seen)
			}
		}
	}
	if r, err := agent.GetTask(alice, &hubv1.GetTaskRequest{Id: "2"}); err != nil || r.GetTask().GetState() != "open" {
		t.Errorf("default's ready task after the outsider's calls = %v, %v; want still open", r, err)
	}
	t.Logf("%d agent RPCs called from another project; none named anything of default", calls)
	// default's remembered allow answers nothing of another project.
	r, err := agent.RequestApproval(out, &hubv1.RequestApprovalRequest{Tool: "Bash", Input: `{"command":"ls"}`, WaitSeconds: 1})
	if err != nil || !r.GetTimedOut() || r.GetItem().GetDecision() != "" {
		t.Errorf("outsider's Bash under default's rule = %v, %v; want nobody answering", r, err)
	}
}
