package hosts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// otlpRecorder stands between a host's telemetry export and the hub's
// OTLP receiver: it passes each export on unchanged and keeps it, so a
// test can say what the host sent. With HUB_TEST_OTLP_RECORD=DIR
// (scripts/record-otlp.sh) the exports are written there as fixtures of
// internal/usage.
type otlpRecorder struct {
	URL string // the endpoint a host is set up with (…/otlp)

	mu      sync.Mutex
	target  string // the hub's HTTP base URL
	exports []otlpExport
}

// otlpExport is one export as the host sent it and the hub answered it.
type otlpExport struct {
	Signal      string // metrics, logs or traces
	ContentType string
	Encoding    string // Content-Encoding
	Auth        bool   // it carried an Authorization header
	Body        []byte
	Status      int // the hub's answer
}

func startRecorder(t *testing.T) *otlpRecorder {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec := &otlpRecorder{URL: "http://" + l.Addr().String() + "/otlp"}
	srv := &http.Server{Handler: http.HandlerFunc(rec.serve)}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return rec
}

// forwardTo sets the hub the exports go to.
func (rec *otlpRecorder) forwardTo(hubHTTP string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.target = hubHTTP
}

func (rec *otlpRecorder) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec.mu.Lock()
	target := rec.target
	rec.mu.Unlock()
	req, err := http.NewRequest(r.Method, target+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for _, h := range []string{"Authorization", "Content-Type", "Content-Encoding"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	rec.mu.Lock()
	rec.exports = append(rec.exports, otlpExport{
		Signal: strings.TrimPrefix(r.URL.Path, "/otlp/v1/"), ContentType: r.Header.Get("Content-Type"),
		Encoding: r.Header.Get("Content-Encoding"), Auth: r.Header.Get("Authorization") != "",
		Body: body, Status: resp.StatusCode,
	})
	rec.mu.Unlock()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
}

// Exports returns the exports so far.
func (rec *otlpRecorder) Exports() []otlpExport {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.exports)
}

// describe lists the exports for a failure message.
func (rec *otlpRecorder) describe() string {
	var sb strings.Builder
	for _, e := range rec.Exports() {
		fmt.Fprintf(&sb, "%s %s %s auth=%v → %d (%d bytes)\n", e.Signal, e.ContentType, e.Encoding, e.Auth, e.Status, len(e.Body))
	}
	if sb.Len() == 0 {
		return "no export reached the hub\n"
	}
	return sb.String()
}

// save writes the exports as fixtures when HUB_TEST_OTLP_RECORD names a
// directory: each signal's exports merged into one body, host_SIGNAL.json.
func (rec *otlpRecorder) save(t *testing.T, host string) {
	t.Helper()
	dir := os.Getenv("HUB_TEST_OTLP_RECORD")
	if dir == "" {
		return
	}
	files, err := fixtures(host, rec.Exports())
	if err != nil {
		t.Fatalf("record %s's exports: %v", host, err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s", filepath.Join(dir, name))
	}
}

// telemetryEnv is a host's environment with telemetry let through (the
// rig turns it off elsewhere) and exported at once rather than each
// minute.
func telemetryEnv(env []string) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "DISABLE_TELEMETRY" || k == "CLAUDE_CODE_ENABLE_TELEMETRY" || k == "GEMINI_TELEMETRY_ENABLED"
	})
	return append(env, "OTEL_METRIC_EXPORT_INTERVAL=1000", "OTEL_LOGS_EXPORT_INTERVAL=500", "OTEL_BLRP_SCHEDULE_DELAY=500")
}

// usageRow is a row of GET /v1/usage.
type usageRow struct {
	Agent               string  `json:"agent"`
	Model               string  `json:"model"`
	InputTokens         int64   `json:"input_tokens,string"`
	OutputTokens        int64   `json:"output_tokens,string"`
	CacheReadTokens     int64   `json:"cache_read_tokens,string"`
	CacheCreationTokens int64   `json:"cache_creation_tokens,string"`
	Requests            int64   `json:"requests,string"`
	CostUSD             float64 `json:"cost_usd"`
}

// ownUsage is what GET /v1/usage answers the agent of token, by agent
// and model.
func (h *testHub) ownUsage(t *testing.T, token string) []usageRow {
	t.Helper()
	req, _ := http.NewRequest("GET", h.http+"/v1/usage?group_by=agent,model", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/usage: %s: %s", resp.Status, b)
	}
	var r struct {
		Rows []usageRow `json:"rows"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("GET /v1/usage: %v: %s", err, b)
	}
	return r.Rows
}

// perRequest is what the hub must count of each model request a host
// made, as the host maps the scripted model's usage (model.Input …).
type perRequest struct {
	input, output, cacheRead, cacheCreation int64
	cost                                    bool // the host reports a cost
}

// telemetryScenario: the host, set up by hub setup to export its
// telemetry to the hub, runs one tool call and a final text; the hub's
// usage of the agent (GET /v1/usage with the agent's token) then holds
// exactly what the scripted model reported for each request the host made,
// under the host's model, every export carrying the agent's token, and the
// tool it ran is the agent's activity (a checkpoint naming it).
func telemetryScenario(t *testing.T, h *testHub, rec *otlpRecorder, host, token string, run func() int, wantModel, tool string, each perRequest) {
	t.Helper()
	requests := int64(run())
	var got usageRow
	deadline := time.Now().Add(15 * time.Second)
	for {
		rows := h.ownUsage(t, token)
		got = usageRow{}
		for _, r := range rows {
			if r.Agent != "bob" || !strings.Contains(r.Model, wantModel) {
				t.Fatalf("usage row %+v, want agent bob and a %s model", r, wantModel)
			}
			got.InputTokens += r.InputTokens
			got.OutputTokens += r.OutputTokens
			got.CacheReadTokens += r.CacheReadTokens
			got.CacheCreationTokens += r.CacheCreationTokens
			got.Requests += r.Requests
			got.CostUSD += r.CostUSD
		}
		if got.Requests >= requests || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	rec.save(t, host)
	if requests == 0 {
		t.Fatal("the host made no model request")
	}
	for _, e := range rec.Exports() {
		if !e.Auth || e.Status != 200 {
			t.Errorf("an export of %s: auth=%v, the hub answered %d", e.Signal, e.Auth, e.Status)
		}
	}
	want := usageRow{InputTokens: requests * each.input, OutputTokens: requests * each.output,
		CacheReadTokens: requests * each.cacheRead, CacheCreationTokens: requests * each.cacheCreation, Requests: requests}
	// The tool the host ran is bob's activity.
	act, err := h.admin.ListActivity(h.actx, &hubv1.ListActivityRequest{Name: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if cps := act.GetCheckpoints(); len(cps) == 0 || !strings.Contains(cps[0].GetCurrentActivity(), tool) {
		t.Errorf("bob's checkpoints = %v, want the newest naming %s", cps, tool)
	}
	cost := got.CostUSD
	got.CostUSD = 0
	if got != want || (cost > 0) != each.cost {
		t.Errorf("bob's usage after %d model requests = %+v (cost %v), want %+v (a cost: %v)\nexports:\n%s",
			requests, got, cost, want, each.cost, rec.describe())
	}
}
