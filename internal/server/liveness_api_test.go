package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// lvHub is a hub booted on loopback with a fake clock and no orchestrator:
// tests advance the clock and run the health step themselves.
type lvHub struct {
	m     *app.Main
	clock *hub.FakeClock
	admin hubv1.AdminServiceClient
	agent hubv1.AgentServiceClient
	adm   context.Context // carries the admin token
}

var lvStart = time.Date(2026, 1, 19, 14, 0, 0, 0, time.UTC)

func newLvHub(t *testing.T) *lvHub {
	t.Helper()
	clock := hub.NewFakeClock(lvStart)
	m := app.NewMain()
	m.DataDir = t.TempDir()
	m.GRPCAddr, m.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	m.Logger = slog.New(slog.DiscardHandler)
	m.NoOrchestrator = true
	m.Clock = clock
	m.Config.Location = time.UTC
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	return &lvHub{
		m: m, clock: clock,
		admin: hubv1.NewAdminServiceClient(m.Conn()),
		agent: hubv1.NewAgentServiceClient(m.Conn()),
		adm:   metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok),
	}
}

// newAgent registers an agent and returns a context carrying its token.
func (h *lvHub) newAgent(t *testing.T, name, locale string) context.Context {
	t.Helper()
	r, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: name, Locale: locale})
	if err != nil {
		t.Fatal(err)
	}
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+r.GetToken())
}

// tick runs the orchestrator's health step at the fake clock's time.
func (h *lvHub) tick(t *testing.T) {
	t.Helper()
	svc := h.m.Services
	for more := true; more; {
		var err error
		if _, _, more, err = svc.Liveness.SweepHealth(context.Background(), svc.Core.Now(), 500); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *lvHub) health(t *testing.T, name string) *hubv1.AgentHealth {
	t.Helper()
	r, err := h.admin.GetAgentHealth(h.adm, &hubv1.GetAgentHealthRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetHealth()
}

func kinds(fs []*hubv1.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.GetKind()
	}
	return out
}

func (h *lvHub) eventKinds(t *testing.T, agent string) []string {
	t.Helper()
	r, err := h.admin.ListEvents(h.adm, &hubv1.ListEventsRequest{Agent: agent, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range r.GetEvents() {
		out = append(out, e.GetKind())
	}
	return out
}

func mustLog(t *testing.T, h *lvHub, ctx context.Context, typ, title, urgent string) *hubv1.CreateActivityLogResponse {
	t.Helper()
	r, err := h.agent.CreateActivityLog(ctx, &hubv1.CreateActivityLogRequest{Type: typ, Title: title, Content: []string{"done"}, UrgentReason: urgent})
	if err != nil {
		t.Fatalf("CreateActivityLog(%s %q): %v", typ, title, err)
	}
	return r
}

// TestLivenessScenario replays the seeds' story end to end over the API:
// checkpoints keep a long stretch without activity logs healthy; a silent
// strict deep work is not flagged until it overruns, and then reads
// expired; a non-reflection log after a completed deep work is an anomaly;
// an urgent reason postpones the duty with a recorded waiver.
func TestLivenessScenario(t *testing.T) {
	h := newLvHub(t)
	ada := h.newAgent(t, "ada", "")
	if _, err := h.agent.Heartbeat(ada, &hubv1.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute)
	r := mustLog(t, h, ada, "reflection", "plan the day", "")
	if r.GetHeartbeatId() != "20260119140000" || r.GetLog().GetHeartbeatId() != "20260119140000" || r.GetElapsed().GetElapsedFormatted() != "1m" {
		t.Errorf("first log: heartbeat %q, log's %q, elapsed %+v", r.GetHeartbeatId(), r.GetLog().GetHeartbeatId(), r.GetElapsed())
	}

	// 1. Checkpoints every 4 minutes for 40 minutes, no activity log.
	for i := 1; i <= 10; i++ {
		h.clock.Advance(4 * time.Minute)
		cp, err := h.agent.Checkpoint(ada, &hubv1.CheckpointRequest{CurrentActivity: "investigating the replace tool error"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 2 && (cp.GetSuggestion() == "" || !strings.Contains(cp.GetSuggestion(), "StartDeepWork")) {
			t.Errorf("checkpoint 8 min after the log: suggestion %q, want the StartDeepWork hint", cp.GetSuggestion())
		}
		if cp.GetHeartbeatId() != "20260119140000" || cp.GetConfirmation() == "" || cp.GetCheckpoint().GetId() == "" {
			t.Errorf("checkpoint reply = %+v", cp)
		}
		h.tick(t)
		for _, k := range kinds(h.health(t, "ada").GetFindings()) {
			if strings.HasPrefix(k, "inactivity") {
				t.Fatalf("after %d min of checkpoints: finding %s", 4*i, k)
			}
		}
	}
	if got := h.health(t, "ada"); !slices.Equal(kinds(got.GetFindings()), []string{"reflection_overdue"}) {
		t.Errorf("after 40 min without a reflection: findings %v, want [reflection_overdue]", kinds(got.GetFindings()))
	}

	// 2. Strict deep work for 20 minutes, then silence: not flagged.
	sd, err := h.agent.StartDeepWork(ada, &hubv1.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "render the book", PlannedMinutes: 20})
	if err != nil {
		t.Fatal(err)
	}
	if sd.GetDeepWork().GetState() != "active" || sd.GetDeepWork().GetAgent() != "ada" || sd.GetReplaced() != nil {
		t.Errorf("StartDeepWork = %+v", sd)
	}
	for m := 1; m < 20; m++ {
		h.clock.Advance(time.Minute)
		h.tick(t)
		if got := h.health(t, "ada"); got.GetState() != "healthy" {
			t.Fatalf("%d min into strict deep work: %s %v", m, got.GetState(), kinds(got.GetFindings()))
		}
	}
	el, err := h.agent.GetHeartbeatElapsedTime(ada, &hubv1.GetHeartbeatElapsedTimeRequest{})
	if err != nil || el.GetElapsed().GetLevel() != "relaxed" {
		t.Errorf("elapsed during deep work = %+v, %v; want relaxed", el, err)
	}

	// 3. Overrun: flagged, and the declaration reads expired.
	h.clock.Advance(90 * time.Second)
	h.tick(t)
	got := h.health(t, "ada")
	if got.GetState() != "anomaly" || !slices.Contains(kinds(got.GetFindings()), "deep_work_expired") || !slices.Contains(kinds(got.GetFindings()), "inactivity_anomaly") {
		t.Errorf("after the overrun: %s %v, want anomaly with deep_work_expired and inactivity_anomaly", got.GetState(), kinds(got.GetFindings()))
	}
	dw, err := h.agent.GetDeepWork(ada, &hubv1.GetDeepWorkRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if dw.GetCurrent() != nil || len(dw.GetRecent()) == 0 || dw.GetRecent()[0].GetState() != "expired" || dw.GetRecent()[0].GetEndedAt().AsTime() != sd.GetDeepWork().GetEndsAt().AsTime() {
		t.Errorf("GetDeepWork after the overrun = %+v", dw)
	}
	if evs := h.eventKinds(t, "ada"); !slices.Contains(evs, "deep_work_expired") || !slices.Contains(evs, "health_changed") {
		t.Errorf("events = %v, want deep_work_expired and health_changed", evs)
	}

	// The next activity log clears the overrun; a reflection clears the rest.
	r = mustLog(t, h, ada, "内省", "rendering took longer", "")
	if r.GetCompletedDeepWork() != nil || r.GetReflectionDue() || r.GetLog().GetType() != "reflection" {
		t.Errorf("log after the overrun = %+v", r)
	}
	if got := h.health(t, "ada"); got.GetState() != "healthy" {
		t.Errorf("after a reflection log: %s %v, want healthy", got.GetState(), kinds(got.GetFindings()))
	}

	// 4. Deep work completed by a log; the next log is not a reflection.
	h.clock.Advance(time.Minute)
	if _, err := h.agent.StartDeepWork(ada, &hubv1.StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "write chapter 2"}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(3 * time.Minute)
	r = mustLog(t, h, ada, "creation", "chapter 2 written", "")
	if r.GetCompletedDeepWork().GetState() != "completed" || !r.GetReflectionDue() || !strings.Contains(strings.Join(r.GetNotes(), " "), "Reflection is now due") {
		t.Errorf("completing log = %+v", r)
	}
	h.clock.Advance(time.Minute)
	r = mustLog(t, h, ada, "thinking", "what next", "")
	if r.GetReflectionDue() || !strings.Contains(strings.Join(r.GetNotes(), " "), "Reflection skipped") {
		t.Errorf("skipping log = %+v", r)
	}
	got = h.health(t, "ada")
	if got.GetState() != "anomaly" || !slices.Equal(kinds(got.GetFindings()), []string{"reflection_skipped"}) {
		t.Errorf("after skipping the reflection: %s %v", got.GetState(), kinds(got.GetFindings()))
	}
	if evs := h.eventKinds(t, "ada"); !slices.Contains(evs, "reflection_skipped") {
		t.Errorf("events = %v, want reflection_skipped", evs)
	}

	// 5. With an urgent reason the duty moves one log further (waiver).
	if _, err := h.agent.StartDeepWork(ada, &hubv1.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "fix the build", PlannedMinutes: 30}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute)
	mustLog(t, h, ada, "creation", "build fixed", "")
	r = mustLog(t, h, ada, "observation", "production is down", "pager went off")
	if !r.GetReflectionDue() {
		t.Errorf("waived log: reflection_due false, want still due")
	}
	if evs := h.eventKinds(t, "ada"); !slices.Contains(evs, "reflection_waived") {
		t.Errorf("events = %v, want reflection_waived", evs)
	}
	r = mustLog(t, h, ada, "reflection", "looking back", "")
	if r.GetReflectionDue() {
		t.Error("reflection after the waiver: still due")
	}
	if got := h.health(t, "ada"); got.GetState() != "healthy" {
		t.Errorf("after the reflection: %s %v", got.GetState(), kinds(got.GetFindings()))
	}
}

// TestDeepWorkReplacementAndStatus checks that a new declaration replaces
// the active one and says so, and that status and agent views carry health.
func TestDeepWorkReplacementAndStatus(t *testing.T) {
	h := newLvHub(t)
	bo := h.newAgent(t, "bo", "ja")
	if _, err := h.agent.StartDeepWork(bo, &hubv1.StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "調査"}); err != nil {
		t.Fatal(err)
	}
	r, err := h.agent.StartDeepWork(bo, &hubv1.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "画像生成", PlannedMinutes: 45})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetReplaced().GetState() != "completed" || !strings.Contains(strings.Join(r.GetNotes(), " "), "置き換えました") {
		t.Errorf("replacement = %+v", r)
	}
	st, err := h.agent.GetStatus(bo, &hubv1.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetStatus().GetDeepWork().GetPlannedActivity() != "画像生成" || st.GetStatus().GetHealth() != "healthy" {
		t.Errorf("status = %+v", st.GetStatus())
	}
	dw, err := h.agent.GetDeepWork(bo, &hubv1.GetDeepWorkRequest{})
	if err != nil || dw.GetCurrent().GetMode() != "strict" || len(dw.GetRecent()) != 1 {
		t.Errorf("GetDeepWork = %+v, %v", dw, err)
	}
	ag, err := h.admin.GetAgent(h.adm, &hubv1.GetAgentRequest{Name: "bo"})
	if err != nil || ag.GetAgent().GetHealth() != "healthy" || ag.GetAgent().GetPresence() != "active" {
		t.Errorf("agent view = %+v, %v", ag.GetAgent(), err)
	}
	list, err := h.admin.ListDeepWork(h.adm, &hubv1.ListDeepWorkRequest{Agent: "bo", State: "completed"})
	if err != nil || len(list.GetDeepWork()) != 1 || list.GetDeepWork()[0].GetPlannedActivity() != "調査" {
		t.Errorf("ListDeepWork(completed) = %+v, %v", list, err)
	}
	// Japanese texts for a ja agent.
	h.clock.Advance(6 * time.Minute)
	el, err := h.agent.GetHeartbeatElapsedTime(bo, &hubv1.GetHeartbeatElapsedTimeRequest{HeartbeatId: "20260119140000"})
	if err != nil || el.GetElapsed().GetElapsedFormatted() != "6分" || !strings.Contains(el.GetElapsed().GetWarningMessage(), "深い作業宣言中") {
		t.Errorf("ja elapsed = %+v, %v", el, err)
	}
}

func TestHeartbeatElapsedErrors(t *testing.T) {
	h := newLvHub(t)
	cy := h.newAgent(t, "cy", "")
	for _, tc := range []struct{ id, want string }{
		{"2026-01-19", "YYYYMMDDHHMMSS"},
		{"20261319140000", "YYYYMMDDHHMMSS"},
		{"20260119141530", "is 15m30s in the future"},
	} {
		_, err := h.agent.GetHeartbeatElapsedTime(cy, &hubv1.GetHeartbeatElapsedTimeRequest{HeartbeatId: tc.id})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tc.want) {
			t.Errorf("GetHeartbeatElapsedTime(%s) = %v, want InvalidArgument with %q", tc.id, err, tc.want)
		}
	}
	h.clock.Advance(7*time.Minute + 30*time.Second)
	r, err := h.agent.GetHeartbeatElapsedTime(cy, &hubv1.GetHeartbeatElapsedTimeRequest{})
	if err != nil || r.GetHeartbeatId() != "20260119140000" || r.GetElapsed().GetElapsedSeconds() != 450 || r.GetElapsed().GetLevel() != "info" ||
		r.GetElapsed().GetWarningMessage() != "Elapsed time: 7 minutes have passed since this heartbeat began." {
		t.Errorf("elapsed = %+v, %v", r, err)
	}
}

// TestLivenessRESTBadInput sends bad input to every liveness endpoint over
// REST: each gets 400 (404 for an unknown agent) with a readable message,
// and nothing is written.
func TestLivenessRESTBadInput(t *testing.T) {
	h := newLvHub(t)
	agentTok := h.restAgent(t, "dee")
	adminTok, _ := h.m.AdminToken()
	raw, err := sql.Open("sqlite3", "file:"+filepath.Join(h.m.DataDir, "hub.db")+"?vfs=unix-excl&_query_only=1") // the store's VFS: the file is the hub process's alone
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	counts := func() string {
		var b strings.Builder
		for _, table := range []string{"activity_logs", "checkpoints", "deep_work", "events", "liveness"} {
			var n int
			if err := raw.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s=%d ", table, n)
		}
		var st string
		if err := raw.QueryRow("SELECT last_activity_log_at || ',' || last_checkpoint_at || ',' || active_deep_work_id FROM liveness").Scan(&st); err != nil {
			t.Fatal(err)
		}
		return b.String() + st
	}
	long := func(n int) string { return strings.Repeat("x", n) }
	lines := make([]string, 201)
	for i := range lines {
		lines[i] = "l"
	}
	content, _ := json.Marshal(lines)
	h.clock.Advance(time.Minute)

	tests := []struct {
		name, method, path, body string
		admin                    bool
		code                     int
		want                     string
	}{
		{"log: empty", "POST", "/v1/activity-logs", `{}`, false, 400, "type is required"},
		{"log: bad type", "POST", "/v1/activity-logs", `{"type":"nap","title":"x"}`, false, 400, "not an activity type"},
		{"log: no title", "POST", "/v1/activity-logs", `{"type":"thinking","title":"  "}`, false, 400, "title is required"},
		{"log: long title", "POST", "/v1/activity-logs", `{"type":"thinking","title":"` + long(201) + `"}`, false, 400, "at most 200"},
		{"log: too many lines", "POST", "/v1/activity-logs", `{"type":"thinking","title":"x","content":` + string(content) + `}`, false, 400, "content has 201 lines"},
		{"log: spaced tag", "POST", "/v1/activity-logs", `{"type":"thinking","title":"x","tags":["two words"]}`, false, 400, "single word"},
		{"log: long urgent reason", "POST", "/v1/activity-logs", `{"type":"thinking","title":"x","urgent_reason":"` + long(1001) + `"}`, false, 400, "urgent_reason"},
		{"log: unknown field", "POST", "/v1/activity-logs", `{"type":"thinking","title":"x","kind":"y"}`, false, 400, "kind"},
		{"log: not JSON", "POST", "/v1/activity-logs", `{"type":`, false, 400, ""},
		{"checkpoint: empty", "POST", "/v1/checkpoints", `{}`, false, 400, "current_activity is required"},
		{"checkpoint: blank", "POST", "/v1/checkpoints", `{"current_activity":"   "}`, false, 400, "current_activity is required"},
		{"checkpoint: over 1 KiB", "POST", "/v1/checkpoints", `{"current_activity":"` + long(1025) + `"}`, false, 400, "1 KiB"},
		{"checkpoint: two lines", "POST", "/v1/checkpoints", `{"current_activity":"a\nb"}`, false, 400, "single line"},
		{"deep work: no mode", "POST", "/v1/deep-work", `{"planned_activity":"x"}`, false, 400, "mode is required"},
		{"deep work: bad mode", "POST", "/v1/deep-work", `{"mode":"deep","planned_activity":"x"}`, false, 400, "expected flexible or strict"},
		{"deep work: no activity", "POST", "/v1/deep-work", `{"mode":"flexible"}`, false, 400, "planned_activity is required"},
		{"deep work: strict without duration", "POST", "/v1/deep-work", `{"mode":"strict","planned_activity":"x"}`, false, 400, "strict deep work needs planned_minutes"},
		{"deep work: flexible with duration", "POST", "/v1/deep-work", `{"mode":"flexible","planned_activity":"x","planned_minutes":30}`, false, 400, "flexible deep work lasts until your next activity log"},
		{"deep work: negative", "POST", "/v1/deep-work", `{"mode":"strict","planned_activity":"x","planned_minutes":-5}`, false, 400, "greater than 0"},
		{"deep work: too long", "POST", "/v1/deep-work", `{"mode":"strict","planned_activity":"x","planned_minutes":241}`, false, 400, "at most 240 minutes"},
		{"deep work: until past", "POST", "/v1/deep-work", `{"mode":"strict","planned_activity":"x","until":"2020-01-01T00:00:00Z"}`, false, 400, "not in the future"},
		{"deep work: both", "POST", "/v1/deep-work", `{"mode":"strict","planned_activity":"x","planned_minutes":5,"until":"2026-01-19T15:00:00Z"}`, false, 400, "not both"},
		{"deep work: bad limit", "GET", "/v1/deep-work?limit=-1", ``, false, 400, "negative"},
		{"elapsed: malformed", "GET", "/v1/heartbeat/elapsed?heartbeat_id=abc", ``, false, 400, "YYYYMMDDHHMMSS"},
		{"elapsed: future", "GET", "/v1/heartbeat/elapsed?heartbeat_id=20260119141630", ``, false, 400, "is 15m30s in the future"},
		{"health: bad name", "GET", "/v1/admin/agents/NOPE/health", ``, true, 400, "agent name"},
		{"health: unknown agent", "GET", "/v1/admin/agents/nobody/health", ``, true, 404, "nobody"},
		{"events: bad limit", "GET", "/v1/admin/events?limit=-1", ``, true, 400, "negative"},
		{"events: bad kind", "GET", "/v1/admin/events?kind=Bad-Kind", ``, true, 400, "not an event kind"},
		{"events: bad agent", "GET", "/v1/admin/events?agent=NOPE", ``, true, 400, "agent name"},
		{"events: bad cursor", "GET", "/v1/admin/events?after_id=x", ``, true, 400, "after_id"},
		{"deep work list: bad state", "GET", "/v1/admin/deep-work?state=bogus", ``, true, 400, "expected active, completed or expired"},
	}
	before := counts()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := agentTok
			if tc.admin {
				tok = adminTok
			}
			code, msg := h.rest(t, tc.method, tc.path, tc.body, tok)
			if code != tc.code {
				t.Errorf("%s %s = %d (%s), want %d", tc.method, tc.path, code, msg, tc.code)
			}
			if msg == "" || !strings.Contains(msg, tc.want) {
				t.Errorf("%s %s message = %q, want it to contain %q", tc.method, tc.path, msg, tc.want)
			}
			if after := counts(); after != before {
				t.Errorf("%s %s wrote: %s, was %s", tc.method, tc.path, after, before)
			}
		})
	}

	// And the good requests work over REST with the documented fields.
	for _, ok := range []struct{ path, body string }{
		{"/v1/activity-logs", `{"type":"reflection","title":"t","content":["a"],"tags":[],"urgent_reason":""}`},
		{"/v1/checkpoints", `{"current_activity":"working"}`},
		{"/v1/deep-work", `{"mode":"strict","planned_activity":"p","planned_minutes":30}`},
	} {
		if code, msg := h.rest(t, "POST", ok.path, ok.body, agentTok); code != 200 {
			t.Errorf("POST %s = %d %s", ok.path, code, msg)
		}
	}
	for _, path := range []string{"/v1/deep-work", "/v1/heartbeat/elapsed", "/v1/heartbeat/elapsed?heartbeat_id=20260119140000"} {
		if code, msg := h.rest(t, "GET", path, "", agentTok); code != 200 {
			t.Errorf("GET %s = %d %s", path, code, msg)
		}
	}
	for _, path := range []string{"/v1/admin/agents/dee/health", "/v1/admin/events?agent=dee&kind=deep_work_started&limit=5", "/v1/admin/deep-work?agent=dee"} {
		if code, msg := h.rest(t, "GET", path, "", adminTok); code != 200 {
			t.Errorf("GET %s = %d %s", path, code, msg)
		}
	}
}

// restAgent registers an agent and returns its token.
func (h *lvHub) restAgent(t *testing.T, name string) string {
	t.Helper()
	r, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetToken()
}

// rest makes one REST call and returns the status and, for errors, the
// message of the JSON error body (the whole body otherwise).
func (h *lvHub) rest(t *testing.T, method, path, body, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+h.m.HTTPAddress()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct {
		Message string `json:"message"`
	}
	if resp.StatusCode != 200 && json.Unmarshal(b, &e) == nil {
		return resp.StatusCode, e.Message
	}
	return resp.StatusCode, string(b)
}
