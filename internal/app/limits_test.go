package app_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// TestRateLimit: past its burst an agent's writes get ResourceExhausted
// with a message that says why and when to retry, and a retry-after
// trailer; over REST 429 with that Retry-After. Nothing is written, reads
// and other agents go on.
func TestRateLimit(t *testing.T) {
	m := relHub(t, func(m *app.Main) { m.RateLimit = admission.RateLimit{PerSecond: 0.5, Burst: 2} })
	aliceTok := relCreateAgent(t, m, "alice")
	bobTok := relCreateAgent(t, m, "bob")
	conn := relDial(t, m)
	agent := hubv1.NewAgentServiceClient(conn)
	actx := bearer(context.Background(), aliceTok)
	post := &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "hi"}

	for i := range 2 {
		if _, err := agent.PostMessage(actx, post); err != nil {
			t.Fatalf("post %d within the burst: %v", i, err)
		}
	}
	before := dbFingerprint(t, m)
	var trailer metadata.MD
	_, err := agent.PostMessage(actx, post, grpc.Trailer(&trailer))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("post past the burst: %v, want ResourceExhausted", err)
	}
	msg := status.Convert(err).Message()
	for _, want := range []string{"rate limit", `"alice"`, "0.5 writes per second", "retry in", "--rate-limit"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	if ra := trailer.Get(server.RetryAfterKey); len(ra) != 1 || !between(ra[0], 1, 2) {
		t.Errorf("retry-after trailer %q, want 1 or 2 seconds", ra)
	}
	if _, err := agent.Heartbeat(actx, &hubv1.HeartbeatRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("heartbeat past the burst: %v, want ResourceExhausted (every write shares the bucket)", err)
	}
	if dbFingerprint(t, m) != before {
		t.Error("a rate-limited write changed the database")
	}
	if _, err := agent.GetStatus(actx, &hubv1.GetStatusRequest{}); err != nil {
		t.Errorf("a read while rate limited: %v", err)
	}
	if _, err := agent.PostMessage(bearer(context.Background(), bobTok), &hubv1.PostMessageRequest{To: []string{"alice"}, Body: "hi"}); err != nil {
		t.Errorf("another agent's write: %v", err)
	}

	req, _ := http.NewRequest("POST", "http://"+m.HTTPAddress()+"/v1/messages", strings.NewReader(`{"to":["bob"],"body":"hi"}`))
	req.Header.Set("Authorization", "Bearer "+aliceTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("REST post past the burst: HTTP %d %s, want 429", resp.StatusCode, body)
	}
	if ra := resp.Header.Get("Retry-After"); !between(ra, 1, 2) {
		t.Errorf("Retry-After %q, want the real wait: 1 or 2 seconds", ra)
	}
	if !strings.Contains(string(body), "rate limit") {
		t.Errorf("429 body %s does not explain", body)
	}
}

func between(s string, lo, hi int) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= lo && n <= hi
}

// TestMessageSizeBounds: a gRPC request above 4 MiB is refused with
// ResourceExhausted, a REST body above the gateway's bound with 4xx, and
// the hub goes on serving.
func TestMessageSizeBounds(t *testing.T) {
	m := relHub(t, nil)
	tok := relCreateAgent(t, m, "alice")
	relCreateAgent(t, m, "bob")
	agent := hubv1.NewAgentServiceClient(relDial(t, m))
	ctx := bearer(context.Background(), tok)
	big := strings.Repeat("x", 5<<20)
	_, err := agent.PostMessage(ctx, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: big})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("5 MiB gRPC request: %v, want ResourceExhausted", err)
	}
	req, _ := http.NewRequest("POST", "http://"+m.HTTPAddress()+"/v1/messages", strings.NewReader(`{"to":["bob"],"body":"`+big+`"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("5 MiB REST body: HTTP %d %.200s, want 4xx", resp.StatusCode, b)
		}
	}
	// Just above the body limit (64 KiB): a clear InvalidArgument.
	_, err = agent.PostMessage(ctx, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: strings.Repeat("x", 64<<10+1)})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("64 KiB + 1 body: %v, want InvalidArgument", err)
	}
	if _, err := agent.PostMessage(ctx, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "still serving"}); err != nil {
		t.Errorf("post after the refusals: %v", err)
	}
}

// TestCancelledWaitsFreeGoroutines parks 10,000 WaitForMessages calls on
// the in-process connection, cancels them all, and checks that the parked
// waits and the goroutine count come back to where they started.
func TestCancelledWaitsFreeGoroutines(t *testing.T) {
	const waits = 10_000
	m := relHub(t, func(m *app.Main) {
		m.Config.WaitLimits.PerAgent = waits
		m.Config.WaitLimits.Total = waits
		m.ReadLimit.PerSecond = 0 // one agent starts 10,000 waits at once: no read budget
	})
	tok := relCreateAgent(t, m, "sleeper")
	agent := hubv1.NewAgentServiceClient(m.Conn())
	base := bearer(context.Background(), tok)
	timeout := proto.Int32(60)
	// Warm up the connection so its own goroutines are in the baseline.
	if _, err := agent.WaitForMessages(base, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(0)}); err != nil {
		t.Fatal(err)
	}
	settle()
	start := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(base)
	var wg sync.WaitGroup
	codesSeen := make(chan codes.Code, waits)
	for range waits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := agent.WaitForMessages(ctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: timeout})
			codesSeen <- status.Code(err)
		}()
	}
	if !eventually(60*time.Second, func() bool { return m.Services.Core.ParkedWaits() == waits }) {
		cancel()
		t.Fatalf("only %d of %d waits parked", m.Services.Core.ParkedWaits(), waits)
	}
	peak := runtime.NumGoroutine()
	cancel()
	wg.Wait()
	close(codesSeen)
	for c := range codesSeen {
		if c != codes.Canceled {
			t.Fatalf("a cancelled wait ended with %v, want Canceled", c)
		}
	}
	if !eventually(30*time.Second, func() bool { return m.Services.Core.ParkedWaits() == 0 }) {
		t.Fatalf("%d waits still registered after every client cancelled", m.Services.Core.ParkedWaits())
	}
	// A handful of goroutines may come and go (timers, the transport's
	// own); 10,000 leaked ones would be unmistakable.
	const slack = 20
	var now int
	if !eventually(30*time.Second, func() bool { now = runtime.NumGoroutine(); return now <= start+slack }) {
		t.Fatalf("goroutines: %d before, %d with %d parked waits, %d after cancelling them all (want ≤ %d)", start, peak, waits, now, start+slack)
	}
	t.Logf("goroutines: %d before, %d with %d parked waits, %d after cancelling them", start, peak, waits, now)

	// The hub still serves waits afterwards.
	if _, err := agent.WaitForMessages(base, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(0)}); err != nil {
		t.Fatalf("wait after the cancellations: %v", err)
	}
}

// eventually polls cond until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func settle() {
	for range 3 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReadLimit: reads have their own per-agent budget: a tight loop of
// list calls is refused past it while the same agent's writes, and other
// agents' reads, go on.
func TestReadLimit(t *testing.T) {
	m := relHub(t, func(m *app.Main) { m.ReadLimit = admission.RateLimit{PerSecond: 0.5, Burst: 3} })
	aliceTok := relCreateAgent(t, m, "alice")
	bobTok := relCreateAgent(t, m, "bob")
	agent := hubv1.NewAgentServiceClient(relDial(t, m))
	actx := bearer(context.Background(), aliceTok)
	for i := range 3 {
		if _, err := agent.ListMessages(actx, &hubv1.ListMessagesRequest{}); err != nil {
			t.Fatalf("read %d within the burst: %v", i, err)
		}
	}
	_, err := agent.ListMessages(actx, &hubv1.ListMessagesRequest{})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "0.5 reads per second") || !strings.Contains(status.Convert(err).Message(), "--read-rate-limit") {
		t.Fatalf("read past the budget: %v, want ResourceExhausted naming the read budget", err)
	}
	if _, err := agent.WaitForMessages(actx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(0)}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a peek past the budget: %v, want ResourceExhausted (waits draw on the read budget)", err)
	}
	if _, err := agent.PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "hi"}); err != nil {
		t.Errorf("a write while reads are limited: %v", err)
	}
	if _, err := agent.ListMessages(bearer(context.Background(), bobTok), &hubv1.ListMessagesRequest{}); err != nil {
		t.Errorf("another agent's read: %v", err)
	}
}
