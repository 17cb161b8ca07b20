package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// metric returns the value of the sample named name in h's /metrics, ""
// when the hub does not answer or has no such sample.
func (h *hubProc) metric(name string) string {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + h.httpAddr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// waitFor fails the test unless cond holds within limit.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two real hub processes on one PostgreSQL database: a post through A
// wakes a wait parked on B (B's fallback poll is an hour: only A's NOTIFY
// can wake it), a token revoked through A is refused by B, one of them runs the orchestrator, when the leader is
// killed with SIGKILL the other takes over, and a cron job runs once per
// slot throughout.
func TestTwoReplicas(t *testing.T) {
	dbURL := pgtest.Database(t)
	bin := buildBinaries(t)
	flags := []string{"--database-url", dbURL, "--tick-interval", "200ms", "--poll-interval", "1h"}
	a, b := startHub(t, bin, flags...), startHub(t, bin, flags...)

	token := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		r := a.hubctl(t, nil, "agent", "add", name, "-o", "json").must(t)
		var resp struct{ Token string }
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || resp.Token == "" {
			t.Fatalf("agent add %s: %v\n%s", name, err, r.stdout)
		}
		token[name] = resp.Token
	}

	// A cron job every second, for alice, runs while the replicas are up.
	a.hubctl(t, nil, "cron", "add", "beat", "--every", "1s", "--to", "alice", "--message", "beat").must(t)

	ctx := context.Background()
	type reply struct {
		code int
		body map[string]any
		err  error
	}
	done := make(chan reply, 1)
	go func() {
		code, body, err := b.do(ctx, "POST", "/v1/messages:wait", token["bob"], map[string]any{"timeout_seconds": 50})
		done <- reply{code, body, err}
	}()
	waitFor(t, "bob's wait parked on B", 20*time.Second, func() bool { return b.metric("hub_parked_waiters") == "1" })
	if code, body := a.call(t, ctx, "POST", "/v1/messages", token["alice"], map[string]any{"to": []string{"bob"}, "body": "from A"}); code != 200 {
		t.Fatalf("POST /v1/messages on A = %d %v", code, body)
	}
	var r reply
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("bob's wait on B did not return")
	}
	if msgs, _ := r.body["messages"].([]any); r.err != nil || r.code != 200 || len(msgs) != 1 || msgs[0].(map[string]any)["body"] != "from A" {
		t.Fatalf("bob's wait on B = %d %v %v, want alice's message", r.code, r.body, r.err)
	}
	if got := b.metric("hub_wake_latency_seconds_count"); got != "1" {
		t.Errorf("B's hub_wake_latency_seconds_count = %q, want 1 (the wait was woken, not timed out)", got)
	}

	// bob's token, cached by B for his wait, is revoked through A: B
	// refuses it within 5 s (A's NOTIFY clears B's cache).
	a.hubctl(t, nil, "agent", "token", "revoke", "bob").must(t)
	waitFor(t, "B refuses bob's revoked token", 5*time.Second, func() bool {
		code, _, err := b.do(ctx, "POST", "/v1/messages:wait", token["bob"], map[string]any{"timeout_seconds": 0})
		return err == nil && code == http.StatusUnauthorized
	})

	waitFor(t, "cron runs before the fail-over", 30*time.Second, func() bool { return len(cronRuns(t, a)) >= 2 })
	var leader, other *hubProc
	waitFor(t, "one leader", 30*time.Second, func() bool {
		la, lb := a.metric("hub_orchestrator_leader"), b.metric("hub_orchestrator_leader")
		switch la + lb {
		case "10":
			leader, other = a, b
		case "01":
			leader, other = b, a
		default:
			return false
		}
		return true
	})
	before := other.metric("hub_orchestrator_ticks_total")
	leader.kill() // SIGKILL: PostgreSQL ends its session and frees the lock
	waitFor(t, "the other replica leads and ticks", 30*time.Second, func() bool {
		return other.metric("hub_orchestrator_leader") == "1" && other.metric("hub_orchestrator_ticks_total") != before
	})

	// The cron job ran once per slot, before and after the fail-over: as
	// many distinct slots as runs, and one message to alice per run.
	afterKill := len(cronRuns(t, other))
	waitFor(t, "cron runs after the fail-over", 30*time.Second, func() bool { return len(cronRuns(t, other)) >= afterKill+2 })
	other.hubctl(t, nil, "cron", "disable", "beat").must(t)
	rs := cronRuns(t, other)
	slots := map[any]bool{}
	for _, r := range rs {
		if r["status"] != "ok" {
			t.Errorf("cron run %v", r)
		}
		slots[r["scheduled_at"]] = true
	}
	if len(slots) != len(rs) {
		t.Errorf("%d cron runs for %d slots, want one run per slot", len(rs), len(slots))
	}
	_, inbox := other.call(t, ctx, "POST", "/v1/messages:wait", token["alice"], map[string]any{"timeout_seconds": 0, "after_id": "0", "limit": 500})
	msgs, _ := inbox["messages"].([]any)
	beats := 0
	for _, m := range msgs {
		if m.(map[string]any)["kind"] == "cron" {
			beats++
		}
	}
	if beats != len(rs) {
		t.Errorf("alice got %d cron messages for %d runs, want one per run\n%v\n%v", beats, len(rs), msgs, rs)
	}
}

// cronRuns returns the runs of the cron job "beat", newest first.
func cronRuns(t *testing.T, h *hubProc) []map[string]any {
	t.Helper()
	r := h.hubctl(t, nil, "cron", "runs", "beat", "--limit", "500", "-o", "json").must(t)
	var out struct{ Runs []map[string]any }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("cron runs -o json: %v\n%s", err, r.stdout)
	}
	return out.Runs
}
