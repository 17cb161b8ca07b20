package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// `hubbench exposure` measures what a client can take from a hub: each
// attack runs against a fresh child hub on loopback, bounded in count and
// time, and reports one figure. Run it against an older binary with
// --hub-bin to get the "before" column.
//
//	go run ./cmd/hubbench exposure                  # every attack
//	go run ./cmd/hubbench exposure --attacks streams,bodies

var allAttacks = []string{"streams", "bodies", "conns", "sessions", "logs", "revoke", "delete", "pages", "mentions"}

type exposure struct {
	bin, root string
	progress  func(string, ...any)
	streams   int
	hold      int
	sessions  int
	rows      [][2]string
}

func runExposure(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	e := &exposure{}
	fs := flag.NewFlagSet("hubbench exposure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&e.bin, "hub-bin", "", "hub binary to attack (default: build ./cmd/hub)")
	names := fs.String("attacks", strings.Join(allAttacks, ","), "comma-separated: "+strings.Join(allAttacks, ", "))
	fs.IntVar(&e.streams, "streams", 200_000, "unauthenticated gRPC streams opened in the streams attack")
	fs.IntVar(&e.hold, "hold", 20_000, "streams held open at once in the streams attack (older ones are cancelled)")
	fs.IntVar(&e.sessions, "sessions", 40_000, "MCP sessions opened with one token in the sessions attack")
	maxTime := fs.Duration("max-time", 20*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *maxTime)
	defer cancel()
	start := time.Now()
	e.progress = func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	var err error
	if e.root, err = os.MkdirTemp("", "hubbench-exposure-"); err != nil {
		return err
	}
	defer os.RemoveAll(e.root)
	if e.bin == "" {
		e.progress("building ./cmd/hub")
		if e.bin, err = buildHub(ctx, e.root); err != nil {
			return err
		}
	}
	attacks := map[string]func(context.Context) (string, error){
		"streams": e.attackStreams, "bodies": e.attackBodies, "conns": e.attackConns,
		"sessions": e.attackSessions, "logs": e.attackLogs, "revoke": e.attackRevoke,
		"delete": e.attackDelete, "pages": e.attackPages, "mentions": e.attackMentions,
	}
	for _, name := range strings.Split(*names, ",") {
		name = strings.TrimSpace(name)
		f, ok := attacks[name]
		if !ok {
			return fmt.Errorf("--attacks: unknown %q; choose from %s", name, strings.Join(allAttacks, ", "))
		}
		e.progress("attack %s", name)
		fig, err := f(ctx)
		if err != nil {
			fig = "error: " + err.Error()
		}
		e.progress("  %s", fig)
		e.rows = append(e.rows, [2]string{name, fig})
	}
	fmt.Fprintf(stdout, "| attack | figure (%s) |\n|---|---|\n", filepath.Base(e.bin))
	for _, r := range e.rows {
		fmt.Fprintf(stdout, "| %s | %s |\n", r[0], r[1])
	}
	return nil
}

// hub starts a fresh child hub with extra flags; env may wrap it (prlimit).
func (e *exposure) hub(ctx context.Context, wrap []string, args ...string) (*hubProc, error) {
	dir, err := os.MkdirTemp(e.root, "hub-")
	if err != nil {
		return nil, err
	}
	bin := e.bin
	if len(wrap) > 0 {
		script := filepath.Join(dir, "wrapped-hub")
		body := "#!/bin/sh\nexec " + strings.Join(wrap, " ") + " " + e.bin + " \"$@\"\n"
		if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
			return nil, err
		}
		bin = script
	}
	h, err := startHub(ctx, bin, dir, nil, "", args...)
	if err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if code, _, err := rest(ctx, h, "GET", "/healthz", "", nil); err == nil && code == http.StatusOK {
			return h, nil
		}
		if time.Now().After(deadline) {
			h.stop()
			return nil, errors.New("the hub's HTTP port did not answer /healthz in 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// peakRSS returns the hub's peak resident set (VmHWM) in MiB.
func peakRSS(h *hubProc) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kib / 1024
		}
	}
	return 0
}

// rest sends a JSON request to the hub's HTTP port.
func rest(ctx context.Context, h *hubProc, method, path, token string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+h.httpAddr+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, nil
}

// newAgent creates an agent through REST and returns its token.
func newAgent(ctx context.Context, h *hubProc, name string) (string, error) {
	code, m, err := rest(ctx, h, "POST", "/v1/admin/agents", h.token, map[string]any{"name": name})
	if err != nil || code != http.StatusOK {
		return "", fmt.Errorf("create agent %s: %d %v %v", name, code, m, err)
	}
	tok, _ := m["token"].(string)
	return tok, nil
}

// hubWith starts a fresh hub with args and creates the named agents,
// returning their tokens in order; the caller stops the hub.
func (e *exposure) hubWith(ctx context.Context, args []string, names ...string) (*hubProc, []string, error) {
	h, err := e.hub(ctx, nil, args...)
	if err != nil {
		return nil, nil, err
	}
	var toks []string
	for _, n := range names {
		tok, err := newAgent(ctx, h, n)
		if err != nil {
			h.stop()
			return nil, nil, err
		}
		toks = append(toks, tok)
	}
	return h, toks, nil
}

// attackStreams opens unauthenticated gRPC streams and never sends their
// message, holding up to e.hold at once.
func (e *exposure) attackStreams(ctx context.Context) (string, error) {
	h, err := e.hub(ctx, nil)
	if err != nil {
		return "", err
	}
	defer h.stop()
	conn, err := grpc.NewClient(h.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	desc := &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}
	held := make([]context.CancelFunc, 0, e.hold)
	refused := 0
	for i := 0; i < e.streams && ctx.Err() == nil; i++ {
		sctx, scancel := context.WithCancel(ctx)
		if _, err := conn.NewStream(sctx, desc, "/hub.v1.AgentService/PostMessage"); err != nil {
			refused++
		}
		held = append(held, scancel)
		if len(held) >= e.hold {
			held[0]()
			held = held[1:]
		}
	}
	time.Sleep(time.Second)
	rss := peakRSS(h)
	for _, c := range held {
		c()
	}
	ready := "answers"
	if _, _, err := rest(ctx, h, "GET", "/healthz", "", nil); err != nil {
		ready = "does not answer"
	}
	return fmt.Sprintf("peak RSS %.0f MiB after %d unauthenticated streams (%d held at once); /healthz %s", rss, e.streams, e.hold, ready), nil
}

// attackBodies sends 5 MiB REST bodies without a token, 8 at a time.
func (e *exposure) attackBodies(ctx context.Context) (string, error) {
	h, err := e.hub(ctx, nil)
	if err != nil {
		return "", err
	}
	defer h.stop()
	body := bytes.Repeat([]byte("x"), 5<<20)
	payload := append(append([]byte(`{"to":["x"],"body":"`), body...), []byte(`"}`)...)
	codes := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for range 25 {
				req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+h.httpAddr+"/v1/messages", bytes.NewReader(payload))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				codes[resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return fmt.Sprintf("peak RSS %.0f MiB after 200 unauthenticated 5 MiB bodies (8 at once); answers %v", peakRSS(h), codes), nil
}

// attackConns opens 3,000 idle connections to a hub whose fd limit is 256,
// then times /healthz and an admin call.
func (e *exposure) attackConns(ctx context.Context) (string, error) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return "", errors.New("prlimit (util-linux) is not installed")
	}
	h, err := e.hub(ctx, []string{prlimit, "--nofile=256:256"})
	if err != nil {
		return "", err
	}
	defer h.stop()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 3000 {
		if c, err := net.DialTimeout("tcp", h.httpAddr, time.Second); err == nil {
			conns = append(conns, c)
		}
	}
	// A new connection, as an admin's hubctl would open (not one kept
	// alive from before the flood).
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+h.httpAddr+"/v1/admin/info", nil)
	req.Header.Set("Authorization", "Bearer "+h.token)
	start := time.Now()
	resp, err := client.Do(req)
	code := 0
	if err == nil {
		code = resp.StatusCode
		resp.Body.Close()
	}
	if err != nil {
		return fmt.Sprintf("admin call under 3,000 idle connections (fd limit 256): no answer in 10 s (%v)", err), nil
	}
	return fmt.Sprintf("admin call under 3,000 idle connections (fd limit 256): HTTP %d in %s", code, time.Since(start).Round(time.Millisecond)), nil
}

// attackSessions opens MCP sessions with one token and never closes them.
func (e *exposure) attackSessions(ctx context.Context) (string, error) {
	h, toks, err := e.hubWith(ctx, nil, "opener")
	if err != nil {
		return "", err
	}
	defer h.stop()
	tok := toks[0]
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Go(func() {
			for next.Add(1) <= int64(e.sessions) && ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+h.httpAddr+"/mcp", strings.NewReader(initialize))
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	held := "?"
	if v, ok := scrapeMetric(ctx, h.metricsURL(), "hub_mcp_sessions"); ok {
		held = strconv.FormatFloat(v, 'f', 0, 64)
	}
	return fmt.Sprintf("peak RSS %.0f MiB after %d sessions opened with one token; sessions held %s", peakRSS(h), e.sessions, held), nil
}

// attackLogs sends unauthenticated calls for 5 s and measures the log.
func (e *exposure) attackLogs(ctx context.Context) (string, error) {
	h, err := e.hub(ctx, nil, "--log-level", "info")
	if err != nil {
		return "", err
	}
	defer h.stop()
	before := fileSize(h.logPath)
	end := time.Now().Add(5 * time.Second)
	var n atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				if _, _, err := rest(ctx, h, "GET", "/v1/status", "wrong-token", nil); err == nil {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	time.Sleep(200 * time.Millisecond)
	return fmt.Sprintf("%.1f KB of log for %d refused calls in 5 s", float64(fileSize(h.logPath)-before)/1e3, n.Load()), nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// parkedWaiters reads the hub's count of parked waits.
func parkedWaiters(ctx context.Context, h *hubProc) int {
	_, m, _ := rest(ctx, h, "GET", "/v1/admin/info", h.token, nil)
	n, _ := strconv.Atoi(fmt.Sprint(m["parked_waiters"]))
	return n
}

// untilParked waits (at most 25 s) until the hub holds exactly n parked waits.
func untilParked(ctx context.Context, h *hubProc, n int) {
	for deadline := time.Now().Add(25 * time.Second); parkedWaiters(ctx, h) != n && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

// attackRevoke parks a 20 s wait, revokes its token and times the wait's end.
func (e *exposure) attackRevoke(ctx context.Context) (string, error) {
	h, toks, err := e.hubWith(ctx, nil, "bob")
	if err != nil {
		return "", err
	}
	defer h.stop()
	tok := toks[0]
	ended := make(chan int, 1)
	go func() {
		code, _, _ := rest(ctx, h, "POST", "/v1/messages:wait", tok, map[string]any{"timeout_seconds": 20})
		ended <- code
	}()
	untilParked(ctx, h, 1)
	start := time.Now()
	if code, m, err := rest(ctx, h, "POST", "/v1/admin/agents/bob:revokeToken", h.token, map[string]any{}); err != nil || code != http.StatusOK {
		return "", fmt.Errorf("revoke: %d %v %v", code, m, err)
	}
	code := <-ended
	return fmt.Sprintf("a 20 s wait ended %s after its token was revoked, HTTP %d", time.Since(start).Round(10*time.Microsecond), code), nil
}

// attackDelete parks wait_for_messages in an MCP session and times DELETE.
func (e *exposure) attackDelete(ctx context.Context) (string, error) {
	h, toks, err := e.hubWith(ctx, nil, "bob")
	if err != nil {
		return "", err
	}
	defer h.stop()
	tok := toks[0]
	post := func(sid, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+h.httpAddr+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		return http.DefaultClient.Do(req)
	}
	resp, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp, err := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
		resp.Body.Close()
	}
	go func() {
		if resp, err := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait_for_messages","arguments":{"timeout_seconds":20}}}`); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	untilParked(ctx, h, 1)
	parked := parkedWaiters(ctx, h)
	req, _ := http.NewRequestWithContext(ctx, "DELETE", "http://"+h.httpAddr+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Mcp-Session-Id", sid)
	start := time.Now()
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	dresp.Body.Close()
	took := time.Since(start)
	untilParked(ctx, h, 0)
	return fmt.Sprintf("DELETE /mcp with %d parked 20 s wait answered %d in %s; parked waits after: %d", parked, dresp.StatusCode, took.Round(10*time.Microsecond), parkedWaiters(ctx, h)), nil
}

// attackPages posts 80 messages of 60 KiB and lists them over REST.
func (e *exposure) attackPages(ctx context.Context) (string, error) {
	h, toks, err := e.hubWith(ctx, nil, "big", "reader")
	if err != nil {
		return "", err
	}
	defer h.stop()
	tok := toks[0]
	body := strings.Repeat("y", 60<<10)
	for range 80 {
		if code, m, err := rest(ctx, h, "POST", "/v1/messages", tok, map[string]any{"to": []string{"reader"}, "body": body}); err != nil || code != http.StatusOK {
			return "", fmt.Errorf("post: %d %v %v", code, m, err)
		}
	}
	code, m, err := rest(ctx, h, "GET", "/v1/admin/messages?limit=500", h.token, nil)
	if err != nil {
		return "", err
	}
	msgs, _ := m["messages"].([]any)
	return fmt.Sprintf("admin list of 80 × 60 KiB messages: HTTP %d, %d messages in the page, has_more %v", code, len(msgs), m["has_more"]), nil
}

// attackMentions posts bodies of 9,520 @names while another agent posts,
// and reports that agent's post latency.
func (e *exposure) attackMentions(ctx context.Context) (string, error) {
	h, toks, err := e.hubWith(ctx, []string{"--rate-limit", "0"}, "bomber", "quiet")
	if err != nil {
		return "", err
	}
	defer h.stop()
	bomber, quiet := toks[0], toks[1]
	var b strings.Builder
	for i := range 9520 {
		fmt.Fprintf(&b, "@a%d ", i)
	}
	bomb := b.String()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bombCode atomic.Int64
	for w := 0; w < 4; w++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, _, _ := rest(ctx, h, "POST", "/v1/messages", bomber, map[string]any{"to": []string{"quiet"}, "body": bomb})
				bombCode.Store(int64(code))
			}
		})
	}
	var lat []time.Duration
	for range 200 {
		start := time.Now()
		rest(ctx, h, "POST", "/v1/messages", quiet, map[string]any{"to": []string{"bomber"}, "body": "hello"})
		lat = append(lat, time.Since(start))
	}
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	return fmt.Sprintf("another agent's post p50 %s, p99 %s while 4 clients post 9,520-mention bodies (answered HTTP %d)",
		lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond), bombCode.Load()), nil
}
