package app_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// A hub whose PostgreSQL cannot be reached answers every call with a valid
// token Unavailable (REST 503 with Retry-After), never Unauthenticated (a
// client would conclude its token was revoked) nor Internal: both the
// check of a token the hub has not cached (the tap, REST's guard) and a
// call whose handler needs the store. The fault rig (test/faults) met
// hundreds of each during PostgreSQL restarts under load.
func TestPostgresUnreachableIsUnavailable(t *testing.T) {
	u, link := pgtest.Cuttable(t, pgtest.Database(t))
	m := startReplica(t, u)
	tok, _ := m.AdminToken()
	admin := hubv1.NewAdminServiceClient(m.Conn())
	var tokens []string
	for _, name := range []string{"alice", "bob"} {
		r, err := admin.CreateAgent(coreBearer(tok), &hubv1.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, r.GetToken())
	}
	alice, bob := tokens[0], tokens[1]
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	agents := hubv1.NewAgentServiceClient(conn)
	// bob's token is in the hub's auth cache; alice's has never been used.
	if _, err := agents.GetStatus(coreBearer(bob), &hubv1.GetStatusRequest{}); err != nil {
		t.Fatal(err)
	}

	link.Cut()
	post := &hubv1.PostMessageRequest{To: []string{"alice"}, Body: "hello"}
	_, err = agents.GetStatus(coreBearer(alice), &hubv1.GetStatusRequest{})
	wantUnavailable(t, "gRPC call with a token the hub must look up", err)
	_, err = agents.PostMessage(coreBearer(bob), post)
	wantUnavailable(t, "gRPC post with a cached token", err)
	restUnavailable(t, m.HTTPAddress(), alice, "REST call with a token the hub must look up")
	restUnavailable(t, m.HTTPAddress(), bob, "REST post with a cached token")

	link.Restore()
	within(t, "the hub serves again", func() bool {
		_, err := agents.PostMessage(coreBearer(alice), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "back"})
		return err == nil
	})
}

func wantUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	if st, _ := status.FromError(err); st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "retry") {
		t.Errorf("%s with the database cut off: %v, want Unavailable saying to retry", what, err)
	}
}

func restUnavailable(t *testing.T, httpAddr, token, what string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+httpAddr+"/v1/messages", bytes.NewBufferString(`{"to":["alice"],"body":"hi"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req.WithContext(context.Background()))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("%s with the database cut off: %d, Retry-After %q: %s; want 503 with Retry-After", what, resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}
