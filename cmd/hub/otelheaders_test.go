package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hub otel-headers prints the agent's header from its token file, as a
// host's headers helper reads it; without a token it fails saying so.
func TestOtelHeaders(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dev.token")
	if err := os.WriteFile(file, []byte("ah_agent_secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"otel-headers", "--token-file", file}, &out, &errb); err != nil {
		t.Fatalf("otel-headers: %v (%s)", err, errb.String())
	}
	var h map[string]string
	if err := json.Unmarshal(out.Bytes(), &h); err != nil || len(h) != 1 || h["Authorization"] != "Bearer ah_agent_secret" {
		t.Errorf("otel-headers printed %q (%v), want the Authorization header alone", out.String(), err)
	}
	t.Setenv("HUB_TOKEN", "")
	t.Setenv("HUB_TOKEN_FILE", "")
	out.Reset()
	if err := run(context.Background(), []string{"otel-headers"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "no agent token") || out.Len() != 0 {
		t.Errorf("otel-headers without a token: %v, printed %q; want an error and nothing printed", err, out.String())
	}
}

func TestOTLPEndpoint(t *testing.T) {
	for _, c := range []struct{ flag, addr, want, err string }{
		{"", "127.0.0.1:7700", "http://127.0.0.1:7701/otlp", ""},
		{"", "[::1]:9000", "http://[::1]:9001/otlp", ""},
		{"", "localhost:7700", "http://localhost:7701/otlp", ""},
		{"", "hub.example.com:7700", "", ""}, // beyond loopback: only when given
		{"off", "127.0.0.1:7700", "", ""},
		{"https://hub.example.com:7701/otlp/", "hub.example.com:7700", "https://hub.example.com:7701/otlp", ""},
		{"hub:7701", "127.0.0.1:7700", "", "give the hub's OTLP endpoint"},
	} {
		got, err := otlpEndpoint(c.flag, c.addr)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("otlpEndpoint(%q, %q) = %q, %v; want %q, error with %q", c.flag, c.addr, got, err, c.want, c.err)
		}
	}
}
