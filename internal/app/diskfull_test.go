package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/app"
)

// A full disk: writes answer 503 "disk full", /readyz turns not ready,
// reads are still served.
func TestDiskFullREST(t *testing.T) {
	t.Parallel()
	m := relHub(t, func(m *app.Main) { m.MaxDBSize = 512 << 10 })
	tok := relCreateAgent(t, m, "alice")
	h := &coreHub{m: m, base: "http://" + m.HTTPAddress()}
	body := `{"to":["alice"],"body":"` + strings.Repeat("z", 32<<10) + `"}`
	code, raw := 0, ""
	for i := 0; i < 100; i++ {
		if code, raw, _ = h.do(t, "POST", "/v1/messages", tok, body); code != http.StatusOK {
			break
		}
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(raw, "disk full") {
		t.Fatalf("post into a full disk: %d %s, want 503 saying disk full", code, raw)
	}
	if code, raw, _ := h.do(t, "GET", "/readyz", "", ""); code != http.StatusServiceUnavailable || !strings.Contains(raw, "disk full") {
		t.Errorf("/readyz with a full disk: %d %s, want 503 saying disk full", code, raw)
	}
	if code, raw, _ := h.do(t, "GET", "/v1/messages?limit=1", tok, ""); code != http.StatusOK {
		t.Errorf("read with a full disk: %d %s, want 200", code, raw)
	}
}
