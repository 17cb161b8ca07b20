package app_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// startOrchestratedHub starts a real hub with a fast orchestrator.
func startOrchestratedHub(t *testing.T) (*app.Main, hubv1.AdminServiceClient, hubv1.AgentServiceClient, context.Context) {
	t.Helper()
	m := app.NewMain()
	m.DataDir = t.TempDir()
	m.GRPCAddr = "127.0.0.1:0"
	m.HTTPAddr = "off"
	m.TickInterval = 50 * time.Millisecond
	m.BeatInterval = time.Second
	m.InactivityTimeout = 2 * time.Second
	m.Logger = slog.New(slog.DiscardHandler)
	if err := m.Start(context.Background()); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	tok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	admin := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	return m, hubv1.NewAdminServiceClient(m.Conn()), hubv1.NewAgentServiceClient(m.Conn()), admin
}

// waitFor parks in WaitForMessages as the agent of ctx until a message of
// kind arrives (other kinds are skipped), and returns it with how long the
// last wait was parked.
func waitFor(t *testing.T, agent hubv1.AgentServiceClient, ctx context.Context, kind string, within time.Duration) (*hubv1.Message, time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	cursor := ""
	for time.Now().Before(deadline) {
		began := time.Now()
		r, err := agent.WaitForMessages(ctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30), AfterId: cursor})
		if err != nil {
			t.Fatalf("WaitForMessages: %v", err)
		}
		parked := time.Since(began)
		for _, msg := range r.GetMessages() {
			if msg.GetKind() == kind {
				return msg, parked
			}
		}
		if r.GetCursor() != "" {
			cursor = r.GetCursor()
		}
	}
	t.Fatalf("no %s message within %v", kind, within)
	return nil, 0
}

// TestEndToEndNudgeAndCronWakeParkedWaiters runs a real hub with a 50 ms
// tick: an inactive agent parked in WaitForMessages is woken by a nudge, and
// another by a cron message.
func TestEndToEndNudgeAndCronWakeParkedWaiters(t *testing.T) {
	t.Parallel()
	_, admin, agent, adminCtx := startOrchestratedHub(t)
	login := func(name string) context.Context {
		r, err := admin.CreateAgent(adminCtx, &hubv1.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+r.GetToken())
	}
	sleepy, worker := login("sleepy"), login("worker")

	// sleepy parks and does nothing: after 2 s of inactivity the
	// orchestrator nudges it, which ends the wait.
	nudge, parked := waitFor(t, agent, sleepy, "nudge", 15*time.Second)
	if nudge.GetFrom() != "orchestrator" || !nudge.GetMentionsYou() {
		t.Errorf("nudge = %+v", nudge)
	}
	if parked >= 25*time.Second {
		t.Errorf("the nudge did not wake the wait (parked %v)", parked)
	}

	// worker parks; a cron job every second wakes it.
	if _, err := admin.CreateCronJob(adminCtx, &hubv1.CreateCronJobRequest{Job: &hubv1.CronJob{
		Name: "ping", Kind: "every", EverySeconds: 1, Target: "worker", Message: "wake up",
	}}); err != nil {
		t.Fatal(err)
	}
	msg, parked := waitFor(t, agent, worker, "cron", 15*time.Second)
	if msg.GetBody() != "[cron ping] wake up" || msg.GetFrom() != "orchestrator" {
		t.Errorf("cron message = %+v", msg)
	}
	if parked >= 25*time.Second {
		t.Errorf("the cron message did not wake the wait (parked %v)", parked)
	}

	// The orchestrator's figures reach GetHubInfo and the beat moves.
	info, err := admin.GetHubInfo(adminCtx, &hubv1.GetHubInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetTicks() == 0 || info.GetLastTickAt() == nil || info.GetLastTickError() != "" || info.GetBeat() < 1 {
		t.Errorf("hub info ticks=%d last=%v error=%q beat=%d", info.GetTicks(), info.GetLastTickAt(), info.GetLastTickError(), info.GetBeat())
	}
	runs, err := admin.ListCronRuns(adminCtx, &hubv1.ListCronRunsRequest{Job: "ping"})
	if err != nil || len(runs.GetRuns()) == 0 || runs.GetRuns()[0].GetStatus() != "ok" {
		t.Errorf("cron runs = %v, %v", runs, err)
	}
}
