package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/app"
)

// get sends a GET to the hub's HTTP port with the Host header host (and
// the given extra headers) and returns the status and body.
func getAs(t *testing.T, m *app.Main, path, host string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+m.HTTPAddress()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDNSRebindingRefused: a hub listening on loopback answers only Host
// names of loopback (and those given with --http-allowed-hosts), so a page
// on another name resolving to 127.0.0.1 cannot read /metrics, the health
// checks, the dashboard or /mcp; a browser's request from another origin
// is refused too.
func TestDNSRebindingRefused(t *testing.T) {
	m := relHub(t, func(m *app.Main) { m.HTTPAllowedHosts = []string{"hub.internal", "*.corp.example"} })
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/", "/mcp", "/openapi.json", "/v1/status"} {
		if code, body := getAs(t, m, path, "evil.example:7701", nil); code != http.StatusForbidden || !strings.Contains(body, "--http-allowed-hosts") {
			t.Errorf("GET %s with Host evil.example: %d %q, want 403 naming --http-allowed-hosts", path, code, body)
		}
	}
	for _, host := range []string{"", "localhost:7701", "127.0.0.1", "[::1]:7701", "hub.internal", "a.corp.example"} {
		if code, body := getAs(t, m, "/healthz", host, nil); code != http.StatusOK {
			t.Errorf("GET /healthz with Host %q: %d %q, want 200", host, code, body)
		}
	}
	for origin, want := range map[string]int{
		"http://evil.example":    http.StatusForbidden,
		"null":                   http.StatusForbidden,
		"http://localhost:7701":  http.StatusOK,
		"https://hub.internal":   http.StatusOK,
		"http://127.0.0.1:12345": http.StatusOK,
	} {
		if code, body := getAs(t, m, "/healthz", "", map[string]string{"Origin": origin}); code != want {
			t.Errorf("GET /healthz with Origin %q: %d %q, want %d", origin, code, body, want)
		}
	}
	if code, body := getAs(t, m, "/mcp", "", map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden {
		t.Errorf("/mcp with a foreign Origin: %d %q, want 403", code, body)
	}
}

// TestMetricsToken: with --metrics-token, /metrics answers only with it.
func TestMetricsToken(t *testing.T) {
	m := relHub(t, func(m *app.Main) { m.MetricsToken = "scrape-me" })
	if code, _ := getAs(t, m, "/metrics", "", nil); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := getAs(t, m, "/metrics", "", map[string]string{"Authorization": "Bearer wrong"}); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong token: %d, want 401", code)
	}
	if code, body := getAs(t, m, "/metrics", "", map[string]string{"Authorization": "Bearer scrape-me"}); code != http.StatusOK || !strings.Contains(body, "hub_") {
		t.Errorf("/metrics with the token: %d, want 200 with the hub's metrics", code)
	}
	// Without a token /metrics stays open (on loopback).
	open := relHub(t, nil)
	if code, _ := getAs(t, open, "/metrics", "", nil); code != http.StatusOK {
		t.Errorf("/metrics of a hub without --metrics-token: %d, want 200", code)
	}
}
