package app_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// parkOverGRPC starts a 30 s wait of the agent holding tok over conn's
// AgentService and returns once it is parked; the reply comes on the
// channel.
func parkOverGRPC(t *testing.T, m *app.Main, agent hubv1.AgentServiceClient, tok string) <-chan waitReply {
	t.Helper()
	n := m.Services.Core.ParkedWaits()
	out := make(chan waitReply, 1)
	go func() {
		r, err := agent.WaitForMessages(bearer(context.Background(), tok), &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
		out <- waitReply{r, err}
	}()
	if !eventually(10*time.Second, func() bool { return m.Services.Core.ParkedWaits() == n+1 }) {
		t.Fatal("the wait did not park")
	}
	return out
}

type waitReply struct {
	r   *hubv1.WaitForMessagesResponse
	err error
}

// TestParkedWaitGoesThroughTheInterceptors: a wait parks before the
// interceptors run (server.waitForMessages) and then goes through them:
// woken by a post it returns the message, its log line names its agent,
// and it draws one token of the read budget, not two (the budget of 2
// still allows a peek after it).
func TestParkedWaitGoesThroughTheInterceptors(t *testing.T) {
	var logs lockedBuffer
	m := relHub(t, func(m *app.Main) {
		m.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		m.ReadLimit = admission.RateLimit{PerSecond: 0.001, Burst: 2}
	})
	aliceTok := relCreateAgent(t, m, "alice")
	bobTok := relCreateAgent(t, m, "bob")
	agent := hubv1.NewAgentServiceClient(relDial(t, m))

	reply := parkOverGRPC(t, m, agent, bobTok)
	if _, err := agent.PostMessage(bearer(context.Background(), aliceTok), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "wake up"}); err != nil {
		t.Fatal(err)
	}
	got := <-reply
	if got.err != nil || len(got.r.GetMessages()) != 1 || got.r.GetMessages()[0].GetBody() != "wake up" || got.r.GetTimedOut() {
		t.Fatalf("woken wait: %v %v, want the message", got.r, got.err)
	}
	if !strings.Contains(logs.String(), "method=/hub.v1.AgentService/WaitForMessages code=OK") {
		t.Fatalf("no log line for the wait:\n%s", logs.String())
	}
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(line, "WaitForMessages") && !strings.Contains(line, "agent=bob") {
			t.Errorf("the wait's log line does not name its agent: %s", line)
		}
	}
	bctx := bearer(context.Background(), bobTok)
	if _, err := agent.WaitForMessages(bctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(0)}); err != nil {
		t.Fatalf("a peek within the read budget (the parked wait took one of two): %v", err)
	}
	if _, err := agent.WaitForMessages(bctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a wait past the read budget: %v, want ResourceExhausted", err)
	}
	if n := m.Services.Core.ParkedWaits(); n != 0 {
		t.Fatalf("%d waits still registered after a refused one", n)
	}
}

// TestParkedWaitEnds: a wait parked over gRPC ends with Unauthenticated
// when its token is rotated, PermissionDenied when its agent is disabled,
// and with a timed-out reply when the hub shuts down.
func TestParkedWaitEnds(t *testing.T) {
	m := relHub(t, nil)
	admin := hubv1.NewAdminServiceClient(m.Conn())
	actx := bearer(context.Background(), relAdminToken(t, m))
	agent := hubv1.NewAgentServiceClient(relDial(t, m))
	rotTok := relCreateAgent(t, m, "rot")
	disTok := relCreateAgent(t, m, "dis")
	stopTok := relCreateAgent(t, m, "stop")

	rot := parkOverGRPC(t, m, agent, rotTok)
	if _, err := admin.RotateToken(actx, &hubv1.RotateTokenRequest{Name: "rot"}); err != nil {
		t.Fatal(err)
	}
	if got := <-rot; status.Code(got.err) != codes.Unauthenticated {
		t.Errorf("parked wait, token rotated: %v %v, want Unauthenticated", got.r, got.err)
	}
	dis := parkOverGRPC(t, m, agent, disTok)
	if _, err := admin.DisableAgent(actx, &hubv1.DisableAgentRequest{Name: "dis"}); err != nil {
		t.Fatal(err)
	}
	if got := <-dis; status.Code(got.err) != codes.PermissionDenied {
		t.Errorf("parked wait, agent disabled: %v %v, want PermissionDenied", got.r, got.err)
	}
	stop := parkOverGRPC(t, m, agent, stopTok)
	go m.Close()
	if got := <-stop; got.err != nil || !got.r.GetTimedOut() {
		t.Errorf("parked wait, hub stopping: %v %v, want a timed-out reply", got.r, got.err)
	}
}
