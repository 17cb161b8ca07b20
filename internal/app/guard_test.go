package app_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// restRaw sends body to path with the given headers and returns status and body.
func restRaw(t *testing.T, m *app.Main, path string, body []byte, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+m.HTTPAddress()+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return res.StatusCode, b.String()
}

// REST: the token is checked before the body is read, bodies are capped,
// trailing data is refused, and only Authorization carries the token.
func TestRESTGuard(t *testing.T) {
	t.Parallel()
	m := relHub(t, nil)
	tok := relCreateAgent(t, m, "alice")
	before := dbFingerprint(t, m)
	big := []byte(`{"to":["alice"],"body":"` + strings.Repeat("x", 2<<20) + `"}`)
	for _, tc := range []struct {
		name    string
		body    []byte
		headers map[string]string
		code    int
		msg     string
	}{
		{"no token, 2 MiB body", big, nil, http.StatusUnauthorized, "missing token"},
		{"unknown token, 2 MiB body", big, map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized, "unknown or revoked token"},
		{"token in Grpc-Metadata-Authorization", []byte(`{"to":["alice"],"body":"hi"}`), map[string]string{"Grpc-Metadata-Authorization": "Bearer " + tok}, http.StatusUnauthorized, "missing token"},
		{"2 MiB body with a token", big, map[string]string{"Authorization": "Bearer " + tok}, http.StatusRequestEntityTooLarge, "limit is 1048576 bytes"},
		{"trailing data", []byte(`{"to":["alice"],"body":"hi"} {"body":"smuggled"}`), map[string]string{"Authorization": "Bearer " + tok}, http.StatusBadRequest, "unexpected data after the JSON body"},
	} {
		code, body := restRaw(t, m, "/v1/messages", tc.body, tc.headers)
		if code != tc.code || !strings.Contains(body, tc.msg) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, code, body, tc.code, tc.msg)
		}
	}
	if after := dbFingerprint(t, m); after != before {
		t.Error("a refused REST call wrote to the database")
	}
	// Both headers: Authorization wins, always.
	code, body := restRaw(t, m, "/v1/messages", []byte(`{"to":["alice"],"body":"hi"}`), map[string]string{
		"Authorization": "Bearer " + tok, "Grpc-Metadata-Authorization": "Bearer " + relAdminToken(t, m)})
	if code != http.StatusOK {
		t.Errorf("Authorization with a stray Grpc-Metadata-Authorization: %d %s, want 200", code, body)
	}
}

// gRPC: a call without a known token is refused from its headers, before
// its message is read or a handler runs: it never reaches the interceptors,
// which give every call they see an x-request-id header.
func TestGRPCRefusesUnauthenticatedFromHeaders(t *testing.T) {
	t.Parallel()
	m := relHub(t, nil)
	conn := relDial(t, m)
	req := &hubv1.PostMessageRequest{To: []string{"x"}, Body: strings.Repeat("x", 3<<20)}
	for _, tc := range []struct {
		ctx context.Context
		msg string
	}{
		{context.Background(), "missing token"},
		{bearer(context.Background(), "nope"), "unknown or revoked token"},
	} {
		var hdr metadata.MD
		_, err := hubv1.NewAgentServiceClient(conn).PostMessage(tc.ctx, req, grpc.MaxCallSendMsgSize(8<<20), grpc.Header(&hdr))
		st := status.Convert(err)
		if st.Code() != codes.Unauthenticated || !strings.Contains(st.Message(), tc.msg) {
			t.Errorf("unauthenticated 3 MiB call: %v, want Unauthenticated %q", err, tc.msg)
		}
		if id := hdr.Get("x-request-id"); len(id) > 0 {
			t.Errorf("unauthenticated 3 MiB call reached the interceptors (x-request-id %q): its message was read", id)
		}
	}
}

// TestGRPCLetsClientsIndexNoHeaders: the hub's first SETTINGS give its
// clients no dynamic HPACK table (SETTINGS_HEADER_TABLE_SIZE 0), so a
// connection's headers (its token, user agent and paths) are not kept by
// the hub for the connection's life.
func TestGRPCLetsClientsIndexNoHeaders(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	conn, err := net.DialTimeout("tcp", h.m.GRPCAddress(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("no SETTINGS from the hub: %v", err)
		}
		s, ok := f.(*http2.SettingsFrame)
		if !ok || s.IsAck() {
			continue
		}
		if v, ok := s.Value(http2.SettingHeaderTableSize); !ok || v != 0 {
			t.Fatalf("the hub's SETTINGS_HEADER_TABLE_SIZE: %d (given %v), want 0", v, ok)
		}
		return
	}
}
