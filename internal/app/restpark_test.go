package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A REST call that parks longer than the HTTP server's write timeout (an
// approval may wait minutes) answers before it, timed out, instead of an
// empty reply when the server cuts the connection. The write timeout is
// WaitMax + 30 s, so with WaitMax at 1 s the approval asked to wait 120 s
// gets its answer after about 26 s.
func TestRESTParkAnswersWithinTheWriteTimeout(t *testing.T) {
	h := startCoreHub(t, "", func(c *hub.Config) { c.WaitMax = time.Second })
	tok := h.newAgent(t, "ann")
	req, err := http.NewRequest(http.MethodPost, h.base+"/v1/approvals", strings.NewReader(`{"tool":"Bash","input":"{\"command\":\"ls\"}","wait_seconds":120}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	client := &http.Client{Timeout: 45 * time.Second}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("the parked approval got no reply after %s: %v", time.Since(start).Round(time.Second), err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("the reply was cut after %s: %v", time.Since(start).Round(time.Second), err)
	}
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"timed_out":true`) {
		t.Fatalf("status %d, body %s; want 200 and timed_out", res.StatusCode, body)
	}
	if took := time.Since(start); took > 31*time.Second {
		t.Errorf("answered after %s, past the write timeout", took)
	}
}
