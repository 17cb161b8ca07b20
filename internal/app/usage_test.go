package app_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// post sends an OTLP export to the hub's receiver.
func (h *coreHub) post(t *testing.T, path, token, contentType string, body []byte, gz bool) (int, string) {
	t.Helper()
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		body = b.Bytes()
	}
	req, err := http.NewRequest("POST", h.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(got)
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../usage/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUsageFromHostTelemetry: a Claude Code host exports its events (OTLP
// JSON) and its metrics (protobuf, gzip) to the hub as its agent; the
// hub's reports show exactly what the host reported, once, whoever asks.
func TestUsageFromHostTelemetry(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	r, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	tok := r.GetToken()
	const js, pb = "application/json", "application/x-protobuf"
	logs := fixture(t, "claude_logs.json")
	var metrics colmetrics.ExportMetricsServiceRequest
	if err := protojson.Unmarshal(fixture(t, "claude_metrics.json"), &metrics); err != nil {
		t.Fatal(err)
	}
	metricsPB, err := proto.Marshal(&metrics)
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, path, token, ct string
		body                  []byte
		gz                    bool
		code                  int
		text                  string
	}{
		{"no token", "/otlp/v1/logs", "", js, logs, false, 401, "missing token"},
		{"unknown token", "/otlp/v1/logs", "nope", js, logs, false, 401, "unknown or revoked token"},
		{"admin token", "/otlp/v1/logs", h.token, js, logs, false, 403, "needs that agent's token"},
		{"malformed JSON", "/otlp/v1/logs", tok, js, []byte(`{"resourceLogs":[{`), false, 400, "malformed OTLP logs export"},
		{"malformed protobuf", "/otlp/v1/metrics", tok, pb, []byte{0xff, 0xff, 0xff}, false, 400, "malformed OTLP metrics export"},
		{"empty body", "/otlp/v1/logs", tok, js, nil, false, 0, ""},
		{"wrong type", "/otlp/v1/logs", tok, "text/plain", logs, false, 415, "application/x-protobuf or application/json"},
		{"too large", "/otlp/v1/logs", tok, js, bytes.Repeat([]byte(" "), 5<<20), false, 413, "export too large"},
		{"logs", "/otlp/v1/logs", tok, js, logs, true, 200, "{}"},
		{"logs resent", "/otlp/v1/logs", tok, js, logs, false, 200, "{}"},
		{"metrics", "/otlp/v1/metrics", tok, pb, metricsPB, true, 200, ""},
		{"metrics resent", "/otlp/v1/metrics", tok, pb, metricsPB, false, 200, ""},
		{"traces dropped", "/otlp/v1/traces", tok, js, []byte(`{"resourceSpans":[]}`), false, 200, "{}"},
	} {
		if c.code == 0 {
			code, body := h.post(t, c.path, c.token, c.ct, nil, false)
			if code != 400 {
				t.Errorf("empty JSON body: %d %s, want 400", code, body)
			}
			continue
		}
		code, body := h.post(t, c.path, c.token, c.ct, c.body, c.gz)
		if code != c.code || !strings.Contains(body, c.text) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, code, body, c.code, c.text)
		}
	}

	// What the real Claude Code sent in the hosts rig: two requests of 10
	// input, 5 output, 4 cache-read and 2 cache-write tokens; its metrics
	// repeat its events and are not counted.
	sonnet := map[string]float64{"input_tokens": 20, "output_tokens": 10, "cache_read_tokens": 8, "cache_creation_tokens": 4, "requests": 2, "cost_usd": 0.0002274}
	for _, ask := range []struct{ path, token string }{
		{"/v1/admin/usage?group_by=agent,model", h.token},
		{"/v1/usage?group_by=agent,model", tok},
	} {
		code, body, _ := h.do(t, "GET", ask.path, ask.token, "")
		var got struct{ Rows []map[string]any }
		if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || len(got.Rows) != 1 {
			t.Fatalf("GET %s: %d %s, want one row (sonnet)", ask.path, code, body)
		}
		for i, want := range []map[string]float64{sonnet} {
			row := got.Rows[i]
			if row["agent"] != "coder" {
				t.Errorf("%s row %d: agent %v, want coder", ask.path, i, row["agent"])
			}
			for k, w := range want {
				var g float64
				switch v := row[k].(type) {
				case string: // int64 in JSON
					json.Unmarshal([]byte(v), &g)
				case float64:
					g = v
				}
				if math.Abs(g-w) > 1e-9 {
					t.Errorf("%s %v: %s = %v, want %v", ask.path, row["model"], k, row[k], w)
				}
			}
		}
	}
	// The tool Claude Code ran is coder's activity: a checkpoint, once.
	act, err := h.admin.ListActivity(h.adm, &hubv1.ListActivityRequest{Name: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	if cps := act.GetCheckpoints(); len(cps) != 1 || cps[0].GetCurrentActivity() != "tools run (host telemetry): Bash" {
		t.Errorf("coder's checkpoints = %v, want one naming Bash", cps)
	}
	if code, body, _ := h.do(t, "GET", "/v1/admin/usage?group_by=colour", h.token, ""); code != 400 || !strings.Contains(body, "expected agent, project, task, model, day or hour") {
		t.Errorf("bad group_by: %d %s, want 400 naming the fields", code, body)
	}
	if code, _, _ := h.do(t, "GET", "/v1/usage", h.token, ""); code != 403 {
		t.Errorf("the admin token on /v1/usage: %d, want 403", code)
	}
	// A rate limit the host reports now shows in the agent's status.
	now := strconv.FormatInt(time.Now().UnixNano(), 10)
	limited := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"claude-code"}}]},"scopeLogs":[{"logRecords":[
		{"timeUnixNano":"` + now + `","body":{"stringValue":"claude_code.api_error"},"attributes":[{"key":"event.name","value":{"stringValue":"api_error"}},
		{"key":"session.id","value":{"stringValue":"s2"}},{"key":"status_code","value":{"stringValue":"529"}},{"key":"error","value":{"stringValue":"Overloaded"}}]}]}]}]}`
	if code, body := h.post(t, "/otlp/v1/logs", tok, js, []byte(limited), false); code != 200 {
		t.Fatalf("rate limit export: %d %s", code, body)
	}
	_, body, st := h.do(t, "GET", "/v1/status", tok, "")
	status, _ := st["status"].(map[string]any)
	if until, _ := status["rate_limited_until"].(string); until == "" {
		t.Errorf("status after a 529: %s, want rate_limited_until set", body)
	}
	_, metricsText, _ := h.do(t, "GET", "/metrics", "", "")
	if !strings.Contains(metricsText, `hub_usage_tokens_total{agent="coder",type="input"} 20`) {
		t.Errorf("/metrics lacks coder's 20 input tokens")
	}
}
