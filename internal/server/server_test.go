package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/server"
	"github.com/agenthub/hub/internal/store/sqlite"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

const coreAdminToken = "ahk_test-admin-token"

// coreRig is a hub's gRPC server over a temporary SQLite file, reachable
// through bufconn (Conn) and, on request, over real loopback TCP.
type coreRig struct {
	svc   *hub.Services
	db    *sqlite.DB
	srv   *server.Server
	bl    *bufconn.Listener
	conn  *grpc.ClientConn
	agent hubv1.AgentServiceClient
	admin hubv1.AdminServiceClient
	adm   context.Context // carries the admin token
}

// newCoreRig starts a server whose configuration is the default changed by
// opts; everything stops when the test ends.
func newCoreRig(tb testing.TB, opts ...func(*hub.Config)) *coreRig {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "hub.db"), sqlite.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	cfg := hub.DefaultConfig()
	cfg.AdminTokenHash = hub.HashToken(coreAdminToken)
	for _, o := range opts {
		o(&cfg)
	}
	svc := hub.NewServices(hub.NewCore(db, hub.SystemClock{}, cfg, hub.NewWaiters(cfg.WaitLimits, hub.SystemClock{})))
	if err := svc.Init(context.Background()); err != nil {
		tb.Fatal(err)
	}
	r := &coreRig{svc: svc, db: db, srv: server.New(svc, admission.New(svc.Agents, admission.DefaultOptions()), server.Info{DataDir: "/data"}, slog.New(slog.DiscardHandler))}
	r.bl = bufconn.Listen(1 << 20)
	r.serve(tb, r.bl)
	r.conn = r.dial(tb, "passthrough:///bufconn", grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return r.bl.DialContext(ctx)
	}))
	r.agent = hubv1.NewAgentServiceClient(r.conn)
	r.admin = hubv1.NewAdminServiceClient(r.conn)
	r.adm = withToken(context.Background(), coreAdminToken)
	return r
}

// serve serves the rig's services on lis until the test ends.
func (r *coreRig) serve(tb testing.TB, lis net.Listener) {
	tb.Helper()
	g := grpc.NewServer(grpc.ChainUnaryInterceptor(r.srv.UnaryInterceptor), grpc.ChainStreamInterceptor(r.srv.StreamInterceptor))
	r.srv.Register(g)
	done := make(chan struct{})
	go func() { defer close(done); g.Serve(lis) }()
	tb.Cleanup(func() { g.Stop(); <-done })
}

// loopback serves the rig on a real TCP port of 127.0.0.1 and returns a
// new connection to it; call it again for more connections.
func (r *coreRig) loopback(tb testing.TB) *grpc.ClientConn {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r.serve(tb, lis)
	return r.dial(tb, lis.Addr().String())
}

// dial opens a client connection closed when the test ends.
func (r *coreRig) dial(tb testing.TB, target string, opts ...grpc.DialOption) *grpc.ClientConn {
	tb.Helper()
	conn, err := grpc.NewClient(target, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}

// withToken returns ctx carrying token as a bearer token.
func withToken(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// newAgent creates an agent through the admin API and returns a context
// carrying its token, and the token.
func (r *coreRig) newAgent(tb testing.TB, name string) (context.Context, string) {
	tb.Helper()
	res, err := r.admin.CreateAgent(r.adm, &hubv1.CreateAgentRequest{Name: name})
	if err != nil {
		tb.Fatalf("CreateAgent(%s): %v", name, err)
	}
	return withToken(context.Background(), res.GetToken()), res.GetToken()
}

// counts returns how many agents and messages the hub holds.
func (r *coreRig) counts(tb testing.TB) (agents, messages int) {
	tb.Helper()
	as, err := r.admin.ListAgents(r.adm, &hubv1.ListAgentsRequest{IncludeDisabled: true})
	if err != nil {
		tb.Fatal(err)
	}
	ms, err := r.agent.ListMessages(r.adm, &hubv1.ListMessagesRequest{Limit: 500})
	if err != nil {
		tb.Fatal(err)
	}
	return len(as.GetAgents()), len(ms.GetMessages())
}

// wantStatus fails the test unless err has the gRPC code want and a
// message that contains text.
func wantStatus(tb testing.TB, what string, err error, want codes.Code, text string) {
	tb.Helper()
	st, _ := status.FromError(err)
	if st.Code() != want {
		tb.Errorf("%s: code %v (%v), want %v", what, st.Code(), err, want)
		return
	}
	if want != codes.OK && (st.Message() == "" || !strings.Contains(st.Message(), text)) {
		tb.Errorf("%s: message %q, want it to contain %q", what, st.Message(), text)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	_, alice := r.newAgent(t, "alice")
	_, off := r.newAgent(t, "off")
	_, revoked := r.newAgent(t, "revoked")
	if _, err := r.admin.DisableAgent(r.adm, &hubv1.DisableAgentRequest{Name: "off"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.admin.RevokeToken(r.adm, &hubv1.RevokeTokenRequest{Name: "revoked"}); err != nil {
		t.Fatal(err)
	}
	md := func(v ...string) context.Context {
		return metadata.NewOutgoingContext(context.Background(), metadata.Pairs(v...))
	}
	agentCall := func(ctx context.Context) error {
		_, err := r.agent.GetStatus(ctx, &hubv1.GetStatusRequest{})
		return err
	}
	adminCall := func(ctx context.Context) error {
		_, err := r.admin.ListAgents(ctx, &hubv1.ListAgentsRequest{})
		return err
	}
	tests := []struct {
		name string
		call func(context.Context) error
		ctx  context.Context
		want codes.Code
		text string
	}{
		{"agent call, agent token", agentCall, withToken(context.Background(), alice), codes.OK, ""},
		{"agent call, lower-case scheme", agentCall, md("authorization", "bearer "+alice), codes.OK, ""},
		{"agent call, no token", agentCall, context.Background(), codes.Unauthenticated, "missing token"},
		{"agent call, empty bearer", agentCall, md("authorization", "Bearer "), codes.Unauthenticated, "missing token"},
		{"agent call, other scheme", agentCall, md("authorization", "Basic "+alice), codes.Unauthenticated, "missing token"},
		{"agent call, wrong token", agentCall, withToken(context.Background(), "ahk_wrong"), codes.Unauthenticated, "unknown or revoked token"},
		{"agent call, revoked token", agentCall, withToken(context.Background(), revoked), codes.Unauthenticated, "unknown or revoked token"},
		{"agent call, disabled agent", agentCall, withToken(context.Background(), off), codes.PermissionDenied, `agent "off" is disabled`},
		{"agent call, admin token", agentCall, withToken(context.Background(), coreAdminToken), codes.PermissionDenied, "admin token"},
		{"admin call, admin token", adminCall, withToken(context.Background(), coreAdminToken), codes.OK, ""},
		{"admin call, no token", adminCall, context.Background(), codes.Unauthenticated, "missing admin token"},
		{"admin call, wrong token", adminCall, withToken(context.Background(), "ahk_wrong"), codes.Unauthenticated, "unknown admin token"},
		{"admin call, agent token", adminCall, withToken(context.Background(), alice), codes.PermissionDenied, "needs the admin token"},
		{"admin call, disabled agent's token", adminCall, withToken(context.Background(), off), codes.Unauthenticated, "admin token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantStatus(t, tt.name, tt.call(tt.ctx), tt.want, tt.text)
		})
	}
}

// The sender of a post is the token's agent: the request has no sender
// field to forge, and the admin posts as "admin".
func TestSenderIsTheTokensAgent(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	alice, _ := r.newAgent(t, "alice")
	bob, _ := r.newAgent(t, "bob")
	p, err := r.agent.PostMessage(alice, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.GetMessage().GetFrom(); got != "alice" {
		t.Errorf("From = %q, want alice", got)
	}
	a, err := r.agent.PostMessage(r.adm, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "from the admin"})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.GetMessage().GetFrom(); got != "admin" {
		t.Errorf("admin post From = %q, want admin", got)
	}
	l, err := r.agent.ListMessages(bob, &hubv1.ListMessagesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var from []string
	for _, m := range l.GetMessages() {
		from = append(from, m.GetFrom())
	}
	if got, want := fmt.Sprint(from), "[alice admin]"; got != want {
		t.Errorf("bob's messages are from %s, want %s", got, want)
	}
	// Status and heartbeat answer for the token's agent.
	st, err := r.agent.GetStatus(bob, &hubv1.GetStatusRequest{})
	if err != nil || st.GetStatus().GetAgent() != "bob" || st.GetStatus().GetUnreadCount() != 2 {
		t.Errorf("bob's status = %v, %v; want bob with 2 unread", st, err)
	}
}

func TestAdminAgents(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	res, err := r.admin.CreateAgent(r.adm, &hubv1.CreateAgentRequest{Name: "alice", Role: "reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.GetAgent(); a.GetName() != "alice" || a.GetRole() != "reviewer" || a.GetCreatedAt() == nil || a.GetDisabled() ||
		a.GetCurrentHeartbeatId() == "" || !strings.HasPrefix(res.GetToken(), "ahk_") {
		t.Errorf("CreateAgent = %v", res)
	}
	tests := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"duplicate", func() error {
			_, err := r.admin.CreateAgent(r.adm, &hubv1.CreateAgentRequest{Name: "alice"})
			return err
		}, codes.AlreadyExists},
		{"bad name", func() error {
			_, err := r.admin.CreateAgent(r.adm, &hubv1.CreateAgentRequest{Name: "Alice!"})
			return err
		}, codes.InvalidArgument},
		{"get unknown", func() error {
			_, err := r.admin.GetAgent(r.adm, &hubv1.GetAgentRequest{Name: "ghost"})
			return err
		}, codes.NotFound},
		{"disable unknown", func() error {
			_, err := r.admin.DisableAgent(r.adm, &hubv1.DisableAgentRequest{Name: "ghost"})
			return err
		}, codes.NotFound},
		{"rotate unknown", func() error {
			_, err := r.admin.RotateToken(r.adm, &hubv1.RotateTokenRequest{Name: "ghost"})
			return err
		}, codes.NotFound},
		{"backup without path", func() error {
			_, err := r.admin.Backup(r.adm, &hubv1.BackupRequest{})
			return err
		}, codes.InvalidArgument},
	}
	for _, tt := range tests {
		wantStatus(t, tt.name, tt.call(), tt.want, "")
	}
	d, err := r.admin.DisableAgent(r.adm, &hubv1.DisableAgentRequest{Name: "alice"})
	if err != nil || !d.GetAgent().GetDisabled() || d.GetAgent().GetDisabledAt() == nil {
		t.Errorf("DisableAgent = %v, %v", d, err)
	}
	l, _ := r.admin.ListAgents(r.adm, &hubv1.ListAgentsRequest{})
	all, _ := r.admin.ListAgents(r.adm, &hubv1.ListAgentsRequest{IncludeDisabled: true})
	if len(l.GetAgents()) != 0 || len(all.GetAgents()) != 1 {
		t.Errorf("ListAgents: %d enabled, %d in all; want 0 and 1", len(l.GetAgents()), len(all.GetAgents()))
	}
	if _, err := r.admin.EnableAgent(r.adm, &hubv1.EnableAgentRequest{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	rot, err := r.admin.RotateToken(r.adm, &hubv1.RotateTokenRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.agent.GetStatus(withToken(context.Background(), res.GetToken()), &hubv1.GetStatusRequest{})
	wantStatus(t, "old token after rotation", err, codes.Unauthenticated, "")
	_, err = r.agent.GetStatus(withToken(context.Background(), rot.GetToken()), &hubv1.GetStatusRequest{})
	wantStatus(t, "rotated token", err, codes.OK, "")

	info, err := r.admin.GetHubInfo(r.adm, &hubv1.GetHubInfoRequest{})
	if err != nil || info.GetAgents() != 1 || info.GetDataDir() != "/data" || info.GetVersion() == "" || info.GetStartedAt() == nil {
		t.Errorf("GetHubInfo = %v, %v", info, err)
	}
}

// The server answers over real loopback TCP as over bufconn.
func TestLoopback(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	conn := r.loopback(t)
	admin := hubv1.NewAdminServiceClient(conn)
	ctx, cancel := context.WithTimeout(r.adm, 10*time.Second)
	defer cancel()
	if _, err := admin.CreateAgent(ctx, &hubv1.CreateAgentRequest{Name: "alice"}); err != nil {
		t.Fatalf("CreateAgent over loopback: %v", err)
	}
	_, err := hubv1.NewAgentServiceClient(conn).GetStatus(context.Background(), &hubv1.GetStatusRequest{})
	wantStatus(t, "no token over loopback", err, codes.Unauthenticated, "missing token")
}
