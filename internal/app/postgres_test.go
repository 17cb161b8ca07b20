package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// startReplica boots a hub on the PostgreSQL database at dbURL, with its
// own data dir and an orchestrator ticking every 50 ms; the fallback poll
// is an hour, so only a notification wakes a wait for another replica's
// post.
func startReplica(tb testing.TB, dbURL string) *app.Main {
	tb.Helper()
	m := app.NewMain()
	m.DataDir, m.DatabaseURL = tb.TempDir(), dbURL
	m.GRPCAddr, m.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	m.Logger = slog.New(slog.DiscardHandler)
	m.TickInterval = 50 * time.Millisecond
	m.Config.PollInterval = time.Hour
	if err := m.Start(context.Background()); err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// leaderGauge reads hub_orchestrator_leader from m's /metrics.
func leaderGauge(tb testing.TB, m *app.Main) string {
	tb.Helper()
	resp, err := http.Get("http://" + m.HTTPAddress() + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "hub_orchestrator_leader "); ok {
			return v
		}
	}
	tb.Fatalf("no hub_orchestrator_leader in /metrics:\n%s", b)
	return ""
}

func within(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	if !eventually(30*time.Second, cond) {
		tb.Fatalf("%s: not within 30 s", what)
	}
}

// Two hubs on one PostgreSQL database: one orchestrator leads (the gauge
// says which), a post made through one wakes a wait parked on the other,
// and when the leader stops the other takes over.
func TestPostgresReplicas(t *testing.T) {
	dbURL := pgtest.Database(t)
	a, b := startReplica(t, dbURL), startReplica(t, dbURL)

	within(t, "one leader", func() bool {
		return leaderGauge(t, a)+leaderGauge(t, b) == "10" || leaderGauge(t, a)+leaderGauge(t, b) == "01"
	})
	leader, other := a, b
	if leaderGauge(t, b) == "1" {
		leader, other = b, a
	}

	tokA, _ := a.AdminToken()
	admin := hubv1.NewAdminServiceClient(a.Conn())
	token := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		r, err := admin.CreateAgent(coreBearer(tokA), &hubv1.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		token[name] = r.GetToken()
	}
	// Over real gRPC listeners: alice posts through A, bob's wait is on B.
	dial := func(m *app.Main) hubv1.AgentServiceClient {
		conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return hubv1.NewAgentServiceClient(conn)
	}
	onA, onB := dial(a), dial(b)
	// bob's wait parks on B (B's fallback poll is an hour: only A's
	// notification can wake it in time).
	type waited struct {
		r   *hubv1.WaitForMessagesResponse
		err error
	}
	woken := make(chan waited, 1)
	thirty := int32(30)
	go func() {
		r, err := onB.WaitForMessages(coreBearer(token["bob"]), &hubv1.WaitForMessagesRequest{TimeoutSeconds: &thirty})
		woken <- waited{r, err}
	}()
	within(t, "bob's wait parked on B", func() bool { return b.Services.Core.ParkedWaits() == 1 })
	posted, err := onA.PostMessage(coreBearer(token["alice"]), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "from replica A"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-woken:
		if got.err != nil || len(got.r.GetMessages()) != 1 || got.r.GetMessages()[0].GetId() != posted.GetMessage().GetId() || got.r.GetTimedOut() {
			t.Fatalf("B's wait = %v, %v; want message %s", got.r, got.err, posted.GetMessage().GetId())
		}
	case <-time.After(25 * time.Second):
		t.Fatal("a post on A did not wake the wait parked on B")
	}

	// The only call of carol, served by the replica that does not lead,
	// reaches the store's presence (that replica's tick writes it).
	carol, err := admin.CreateAgent(coreBearer(tokA), &hubv1.CreateAgentRequest{Name: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	follower := hubv1.NewAgentServiceClient(other.Conn())
	if _, err := follower.GetStatus(coreBearer(carol.GetToken()), &hubv1.GetStatusRequest{}); err != nil {
		t.Fatal(err)
	}
	within(t, "carol's call on the follower in the store", func() bool {
		var seen bool
		if err := leader.Store.View(context.Background(), func(tx hub.Tx) error {
			c, err := tx.AgentByName("carol")
			seen = err == nil && !c.LastSeenAt.IsZero()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return seen
	})

	leader.Close()
	within(t, "the other replica takes over", func() bool { return leaderGauge(t, other) == "1" })
}

// A token revoked, a token rotated and an agent disabled through replica A
// end the agent's wait parked on replica B and are refused by B. B's
// fallback poll is an hour and nothing is posted, so only A's notification
// can end the waits (the auth cache's TTL alone would refuse the tokens in
// time, but never ends a parked wait).
func TestPostgresReplicasForgetChangedAgents(t *testing.T) {
	dbURL := pgtest.Database(t)
	a, b := startReplica(t, dbURL), startReplica(t, dbURL)
	tokA, _ := a.AdminToken()
	admin := hubv1.NewAdminServiceClient(a.Conn())
	onB := hubv1.NewAgentServiceClient(b.Conn())
	for _, tt := range []struct {
		name   string
		change func() error
		want   codes.Code
	}{
		{"bob", func() error {
			_, err := admin.RevokeToken(coreBearer(tokA), &hubv1.RevokeTokenRequest{Name: "bob"})
			return err
		}, codes.Unauthenticated},
		{"carol", func() error {
			_, err := admin.RotateToken(coreBearer(tokA), &hubv1.RotateTokenRequest{Name: "carol"})
			return err
		}, codes.Unauthenticated},
		{"dave", func() error {
			_, err := admin.DisableAgent(coreBearer(tokA), &hubv1.DisableAgentRequest{Name: "dave"})
			return err
		}, codes.PermissionDenied},
	} {
		r, err := admin.CreateAgent(coreBearer(tokA), &hubv1.CreateAgentRequest{Name: tt.name})
		if err != nil {
			t.Fatal(err)
		}
		token := r.GetToken()
		// The token is now in B's auth cache, and a wait is parked on B.
		if _, err := onB.GetStatus(coreBearer(token), &hubv1.GetStatusRequest{}); err != nil {
			t.Fatalf("%s on B: %v", tt.name, err)
		}
		waited := make(chan error, 1)
		go func() {
			timeout := int32(60)
			_, err := onB.WaitForMessages(coreBearer(token), &hubv1.WaitForMessagesRequest{TimeoutSeconds: &timeout})
			waited <- err
		}()
		within(t, tt.name+"'s wait parked on B", func() bool { return b.Services.Core.ParkedWaits() == 1 })
		if err := tt.change(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-waited:
			if status.Code(err) != tt.want {
				t.Fatalf("%s's wait parked on B ended with %v; want %s", tt.name, err, tt.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("changing %s on A did not end the wait parked on B within 5 s", tt.name)
		}
		if _, err := onB.GetStatus(coreBearer(token), &hubv1.GetStatusRequest{}); status.Code(err) != tt.want {
			t.Fatalf("%s's old token on B: %v; want %s", tt.name, err, tt.want)
		}
	}
}

// Two hubs on one PostgreSQL database see each other's paths: an agent
// whose wait is parked on one is reachable on the other within a few ticks
// (a post through the other names nobody unreachable); once the wait ends
// because its caller went away, the other says so within a few ticks too.
func TestPostgresReplicasShareReachability(t *testing.T) {
	dbURL := pgtest.Database(t)
	a, b := startReplica(t, dbURL), startReplica(t, dbURL)
	ctx := context.Background()
	adminTok, err := a.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	admin := hubv1.NewAdminServiceClient(a.Conn())
	actx := bearer(ctx, adminTok)
	mk := func(name string) string {
		r, err := admin.CreateAgent(actx, &hubv1.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetToken()
	}
	aliceTok, bobTok := mk("alice"), mk("bob")
	dial := func(m *app.Main) hubv1.AgentServiceClient {
		conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return hubv1.NewAgentServiceClient(conn)
	}
	onA, onB := dial(a), dial(b)
	adminB := hubv1.NewAdminServiceClient(b.Conn())
	bTok, err := b.AdminToken() // each replica has its own data dir and admin token
	if err != nil {
		t.Fatal(err)
	}
	bctx := bearer(ctx, bTok)
	bobReachableOnB := func() bool {
		r, err := adminB.GetAgent(bctx, &hubv1.GetAgentRequest{Name: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetAgent().GetReachable()
	}
	if bobReachableOnB() {
		t.Fatal("bob reachable before any call")
	}
	wctx, cancel := context.WithCancel(bearer(ctx, bobTok))
	done := make(chan struct{})
	go func() {
		defer close(done)
		onA.WaitForMessages(wctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(60), AfterId: ""})
	}()
	within(t, "bob's wait on a seen on b", bobReachableOnB)
	r, err := onB.PostMessage(bearer(ctx, aliceTok), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "through b"})
	if err != nil || len(r.GetUnreachable()) != 0 {
		t.Errorf("post through b = %v, %v; want nobody unreachable (bob waits on a)", r.GetUnreachable(), err)
	}
	<-done // the post woke it
	cancel()
	// bob's wait answered: it counts for a few seconds, then b sees no path.
	within(t, "bob's path gone on b", func() bool { return !bobReachableOnB() })
}
