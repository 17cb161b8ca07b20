package dashboard_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/dashboard"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
)

const adminToken = "the-admin-token"

// newGate returns the gate of a hub on a temporary SQLite file whose
// admin token is adminToken.
func newGate(t *testing.T) *admission.Gate {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg := hub.DefaultConfig()
	cfg.AdminTokenHash = hub.HashToken(adminToken)
	return admission.New(hub.NewServices(hub.NewCore(db, hub.SystemClock{}, cfg, hub.NewWaiters(cfg.WaitLimits, hub.SystemClock{}))).Agents, admission.DefaultOptions())
}

type rig struct {
	feed *hub.Feed
	dash *dashboard.Dashboard
	srv  *httptest.Server
}

func newRig(t *testing.T, maxStreams int) *rig {
	t.Helper()
	return newClockRig(t, maxStreams, nil)
}

// newClockRig is newRig whose streams run on clock (the system's if nil).
func newClockRig(t *testing.T, maxStreams int, clock hub.Clock) *rig {
	t.Helper()
	feed := hub.NewWaiters(hub.WaitLimits{Streams: maxStreams}, hub.SystemClock{}).Feed()
	d := dashboard.New(dashboard.Options{Feed: feed, Gate: newGate(t), Clock: clock})
	mux := http.NewServeMux()
	for p, h := range d.Routes() {
		mux.Handle(p, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { d.Close(); srv.Close() })
	return &rig{feed: feed, dash: d, srv: srv}
}

// get fetches path without a token and returns the response (its body
// closed) and the body.
func (r *rig) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(r.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// stream is one open change stream read line by line.
type stream struct {
	res    *http.Response
	lines  *bufio.Scanner
	cancel context.CancelFunc
}

func (r *rig) open(t *testing.T, token string) (*stream, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", r.srv.URL+dashboard.StreamPath, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		cancel()
		return nil, res.StatusCode
	}
	t.Cleanup(func() { cancel(); res.Body.Close() })
	return &stream{res: res, lines: bufio.NewScanner(res.Body), cancel: cancel}, res.StatusCode
}

// next returns the next event's name and data, skipping comments.
func (s *stream) next(t *testing.T) (event, data string) {
	t.Helper()
	for s.lines.Scan() {
		line := s.lines.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && event != "":
			return event, data
		}
	}
	t.Fatalf("stream ended: %v", s.lines.Err())
	return "", ""
}

// eventually waits for cond, failing after a generous limit (a condition
// to reach, not a timing to measure).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStreamRefusesWithoutTheAdminToken(t *testing.T) {
	t.Parallel()
	r := newRig(t, 4)
	for _, tok := range []string{"", "an-agent-token", adminToken + "x"} {
		if _, code := r.open(t, tok); code != http.StatusUnauthorized {
			t.Errorf("token %q: status %d, want 401", tok, code)
		}
	}
	// A token in the URL is not a way in.
	res, err := http.Get(r.srv.URL + dashboard.StreamPath + "?access_token=" + adminToken)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("token in the URL: status %d, want 401", res.StatusCode)
	}
	if n := r.feed.Count(); n != 0 {
		t.Errorf("refused streams subscribed: %d subscribers", n)
	}
}

func TestStreamCarriesChanges(t *testing.T) {
	t.Parallel()
	r := newRig(t, 4)
	s, _ := r.open(t, adminToken)
	if got := s.res.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Errorf("Content-Type = %q", got)
	}
	if ev, _ := s.next(t); ev != "hello" {
		t.Fatalf("first event %q, want hello", ev)
	}
	r.feed.Publish(hub.TopicAgents)
	if ev, data := s.next(t); ev != "change" || data != `{"topics":["agents"]}` {
		t.Errorf("got %s %s, want change agents", ev, data)
	}
	r.feed.Publish(hub.TopicMessages)
	r.feed.Publish(hub.TopicTick)
	// Both arrive, merged or one after the other.
	seen := map[string]bool{}
	for !seen["messages"] || !seen["tick"] {
		ev, data := s.next(t)
		if ev != "change" {
			t.Fatalf("event %q, want change", ev)
		}
		for _, topic := range []string{"messages", "tick", "agents"} {
			if strings.Contains(data, `"`+topic+`"`) {
				seen[topic] = true
			}
		}
	}
	if seen["agents"] {
		t.Error("agents announced again without a change")
	}
}

// An inbox change is not held for the merge gap: a person, and maybe a
// hook, waits for it; other changes in the gap wait for its end.
func TestStreamSendsInboxChangesAtOnce(t *testing.T) {
	t.Parallel()
	clock := hub.NewFakeClock(time.Now()) // stands still: the gap never ends
	r := newClockRig(t, 4, clock)
	s, _ := r.open(t, adminToken)
	if ev, _ := s.next(t); ev != "hello" {
		t.Fatalf("first event %q, want hello", ev)
	}
	r.feed.Publish(hub.TopicAgents)
	s.next(t)                     // the gap starts
	r.feed.Publish(hub.TopicTick) // held in the gap
	r.feed.Publish(hub.TopicInbox)
	ev, data := s.next(t)
	if ev != "change" || !strings.Contains(data, `"inbox"`) {
		t.Errorf("got %s %s within the gap, want the inbox change at once", ev, data)
	}
	if !strings.Contains(data, `"tick"`) {
		t.Errorf("the held tick did not go with it: %s", data)
	}
}

// The changes within the gap go in one event at its end, whether they came
// before or after an inbox change sent at once.
func TestStreamMergesChangesWithinTheGap(t *testing.T) {
	t.Parallel()
	clock := hub.NewFakeClock(time.Now())
	r := newClockRig(t, 4, clock)
	s, _ := r.open(t, adminToken)
	if ev, _ := s.next(t); ev != "hello" {
		t.Fatalf("first event %q, want hello", ev)
	}
	r.feed.Publish(hub.TopicAgents)
	s.next(t) // the gap starts; the clock stands still
	r.feed.Publish(hub.TopicTick)
	r.feed.Publish(hub.TopicInbox)
	if ev, data := s.next(t); ev != "change" || data != `{"topics":["tick","inbox"]}` {
		t.Errorf("got %s %s within the gap, want the inbox change at once, with the tick", ev, data)
	}
	for range 3 {
		r.feed.Publish(hub.TopicMessages)
		r.feed.Publish(hub.TopicAgents)
	}
	// The gap ends when the clock moves past it (again and again: the
	// stream may start it after this test's first move).
	got := make(chan [2]string, 1)
	go func() {
		ev, data := s.next(t)
		got <- [2]string{ev, data}
	}()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case <-deadline:
			t.Fatal("no event at the gap's end")
		case e := <-got:
			if e != [2]string{"change", `{"topics":["messages","agents"]}`} {
				t.Errorf("got %s %s at the gap's end, want one change with messages and agents", e[0], e[1])
			}
			return
		case <-time.After(10 * time.Millisecond):
			clock.Advance(time.Second)
		}
	}
}

// Pages that close free their subscriptions and goroutines; a page that
// reconnects gets a fresh stream; the limit answers 429, not a hang.
func TestStreamFreesClosedPagesAndReconnects(t *testing.T) {
	r := newRig(t, 3)
	before := runtime.NumGoroutine()
	var streams []*stream
	for range 3 {
		s, code := r.open(t, adminToken)
		if code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		s.next(t) // hello
		streams = append(streams, s)
	}
	if got := r.feed.Count(); got != 3 {
		t.Fatalf("subscribers = %d, want 3", got)
	}
	if _, code := r.open(t, adminToken); code != http.StatusTooManyRequests {
		t.Errorf("a stream past the limit: status %d, want 429", code)
	}
	for _, s := range streams {
		s.cancel()
		s.res.Body.Close()
	}
	eventually(t, "subscribers freed", func() bool { return r.feed.Count() == 0 })
	http.DefaultClient.CloseIdleConnections()
	eventually(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= before })

	// Reconnect: a new stream works as the first did.
	s, code := r.open(t, adminToken)
	if code != http.StatusOK {
		t.Fatalf("reconnect: status %d", code)
	}
	s.next(t)
	r.feed.Publish(hub.TopicTick)
	if ev, data := s.next(t); ev != "change" || !strings.Contains(data, "tick") {
		t.Errorf("after reconnect got %s %s", ev, data)
	}
	// Server shutdown ends open streams (the page then reconnects).
	r.dash.Close()
	for s.lines.Scan() {
	}
	eventually(t, "subscriber freed at shutdown", func() bool { return r.feed.Count() == 0 })
}

// The page shell is public and carries the safety headers; the assets and
// the docs page too.
func TestPagesAndHeaders(t *testing.T) {
	t.Parallel()
	r := newRig(t, 1)
	for path, want := range map[string]string{
		"/":                       `<label for="token">Admin token (or person token)</label>`,
		"/docs":                   "swagger-ui",
		"/assets/app.js":          "openStream",
		"/assets/style.css":       "prefers-color-scheme",
		"/assets/docs.js":         "/openapi.json",
		"/assets/agents.js":       "trouble first",
		"/assets/ui.js":           "textContent",
		"/assets/icon.svg":        "<svg",
		"/assets/api.js":          "sessionStorage",
		"/assets/agent.js":        "timeline",
		"/assets/orchestrator.js": "cronWords",
		"/assets/messages.js":     "Send as admin",
	} {
		res, body := r.get(t, path)
		if res.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: status %d, body without %q", path, res.StatusCode, want)
		}
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", path, got)
		}
	}
	// No inline script in the pages: every <script> has a src.
	for _, path := range []string{"/", "/docs"} {
		_, body := r.get(t, path)
		for _, tag := range strings.Split(body, "<script")[1:] {
			if open := tag[:strings.IndexByte(tag, '>')]; !strings.Contains(open, "src=") {
				t.Errorf("%s has an inline script: <script%s>", path, open)
			}
		}
	}
	for _, path := range []string{"/nothing-here", "/assets/", "/assets/swagger-ui/"} {
		if res, _ := r.get(t, path); res.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", path, res.StatusCode)
		}
	}
}
