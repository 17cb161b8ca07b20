package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/loopback"
	hubversion "github.com/agenthub/hub/internal/version"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Check outcomes.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
	checkSkip = "skip"
)

// doctorCheck is one line of the doctor's report.
type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail or skip
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

type doctor struct {
	c       *cli
	checks  []doctorCheck
	maxSkew time.Duration
	httpURL string
	timeout time.Duration
}

func (d *doctor) add(name, st, detail, fix string) {
	d.checks = append(d.checks, doctorCheck{Name: name, Status: st, Detail: detail, Fix: fix})
}

func runDoctor(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("doctor")
	d := &doctor{c: c}
	fs.StringVar(&d.httpURL, "http", "", "the hub's HTTP base URL for /readyz (default: the gRPC host, port + 1; https with --tls)")
	fs.DurationVar(&d.maxSkew, "max-skew", 2*time.Second, "clock difference with the hub above which to warn")
	fs.DurationVar(&d.timeout, "timeout", 5*time.Second, "time limit of each check")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("doctor takes no arguments, got %q", pos)
	}
	d.run(ctx)

	failed := 0
	for _, ch := range d.checks {
		if ch.Status == checkFail {
			failed++
		}
	}
	if c.json {
		if err := c.printJSON(map[string]any{"ok": failed == 0, "hub": c.addr, "checks": d.checks}); err != nil {
			return err
		}
	} else {
		d.print()
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed: see the fixes above", failed)
	}
	return nil
}

func (d *doctor) print() {
	w := d.c.out
	width := 0
	for _, ch := range d.checks {
		width = max(width, len(ch.Name))
	}
	for _, ch := range d.checks {
		fmt.Fprintf(w, "[%-4s] %-*s  %s\n", ch.Status, width, ch.Name, ch.Detail)
		if ch.Fix != "" {
			for _, line := range strings.Split(ch.Fix, "\n") {
				fmt.Fprintf(w, "       %-*s  fix: %s\n", width, "", line)
			}
		}
	}
}

// call runs one RPC with the doctor's time limit and measures it.
func (d *doctor) call(ctx context.Context, f func(ctx context.Context) error) (sent, got time.Time, err error) {
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	sent = time.Now()
	err = f(cctx)
	return sent, time.Now(), err
}

func (d *doctor) run(ctx context.Context) {
	c := d.c
	// 1. Reachable: any answer from the hub, even a refusal, proves it.
	cc, err := c.dial()
	if err != nil {
		d.add("hub reachable", checkFail, err.Error(), "give the hub's gRPC address as host:port with --addr or HUB_ADDR")
		return
	}
	sent, got, err := d.call(ctx, func(ctx context.Context) error {
		_, err := hubv1.NewAdminServiceClient(cc).GetHubInfo(ctx, &hubv1.GetHubInfoRequest{})
		return err
	})
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		// explain's first line says what to do; the rest is the raw error.
		msg := c.explain(&rpcError{err: err})
		raw := strings.Trim(strings.TrimSpace(restLines(msg)), "()")
		if raw == "" {
			raw = status.Convert(err).Message()
		}
		d.add("hub reachable", checkFail, fmt.Sprintf("no answer from %s: %s", c.addr, raw), firstLine(msg))
		return
	}
	d.add("hub reachable", checkOK, fmt.Sprintf("%s answered in %s", c.addr, got.Sub(sent).Round(time.Microsecond)), "")
	if !c.useTLS && !loopback.Addr(c.addr) {
		d.add("transport", checkWarn, c.addr+" is not a loopback address and TLS is off: tokens cross the network in clear",
			"start the hub without --insecure (it serves TLS with its own CA) and run the hub setup line of hubctl join-codes create here, or connect with --tls-ca FILE")
	}

	// 2. Tokens: the admin token, and the agent token if one is given.
	var info *hubv1.GetHubInfoResponse
	adminOK, agentOK := false, false
	if _, from, err := c.adminCredential(); err != nil {
		st := checkFail
		if c.token != "" {
			st = checkSkip
		}
		d.add("admin token", st, firstLine(err.Error()), "point hubctl at the hub's data dir (--data-dir or HUB_DATA_DIR) or pass --admin-token")
	} else {
		var r *hubv1.GetHubInfoResponse
		s, g, err := d.call(ctx, func(ctx context.Context) (err error) {
			r, err = c.admin.GetHubInfo(ctx, &hubv1.GetHubInfoRequest{})
			return err
		})
		switch status.Code(err) {
		case codes.OK:
			info, sent, got, adminOK = r, s, g, true
			d.add("admin token", checkOK, "accepted (from "+from+")", "")
		case codes.Unauthenticated:
			d.add("admin token", checkFail, "refused: the token from "+from+" is not this hub's admin token",
				"use the admin.token of the data dir the hub at "+c.addr+" runs on (--data-dir or HUB_DATA_DIR), or pass --admin-token")
		case codes.PermissionDenied:
			d.add("admin token", checkFail, "refused: the token from "+from+" is an agent token", "give the admin token (<data-dir>/admin.token of the hub), not an agent's")
		default:
			d.add("admin token", checkFail, c.explain(err), "")
		}
	}
	var st *hubv1.Status
	if c.token == "" {
		d.add("agent token", checkSkip, "none given", "to check an agent's token, give --token or set HUB_TOKEN")
	} else {
		var r *hubv1.GetStatusResponse
		s, g, err := d.call(ctx, func(ctx context.Context) (err error) {
			r, err = c.agent.GetStatus(ctx, &hubv1.GetStatusRequest{})
			return err
		})
		switch status.Code(err) {
		case codes.OK:
			st, agentOK = r.GetStatus(), true
			if info == nil {
				sent, got = s, g
			}
			d.add("agent token", checkOK, fmt.Sprintf("accepted: agent %q", st.GetAgent()), "")
		case codes.Unauthenticated:
			d.add("agent token", checkFail, "refused: "+status.Convert(err).Message(),
				"the token is unknown, revoked or rotated: get a new one with `hubctl agent token rotate NAME` and update HUB_TOKEN")
		case codes.PermissionDenied:
			fix := "enable the agent with `hubctl agent enable NAME`"
			if strings.Contains(status.Convert(err).Message(), "admin token") {
				fix = "HUB_TOKEN / --token holds the admin token: give an agent's token instead"
			}
			d.add("agent token", checkFail, "refused: "+status.Convert(err).Message(), fix)
		default:
			d.add("agent token", checkFail, c.explain(err), "")
		}
	}
	if !adminOK && !agentOK {
		d.add("access", checkFail, "no working token: hubctl can do nothing with this hub", "fix the token problems above")
	}

	// 3. Clock skew, from the hub's own clock at the time of the call.
	var hubTime *timestamppb.Timestamp
	switch {
	case info != nil:
		hubTime = info.GetTime()
	case st != nil:
		hubTime = st.GetHubTime()
	}
	if hubTime == nil {
		d.add("clock skew", checkSkip, "needs a working token to read the hub's time", "")
	} else {
		d.clockSkew(hubTime.AsTime(), sent, got)
	}

	// 4. The hub's own state.
	if info != nil {
		d.hubState(info)
	}
	// 5. Readiness over HTTP.
	d.readyz(ctx)
}

// clockSkew compares the hub's time with the local clock at the middle of
// the call that read it; the call's duration bounds the error.
func (d *doctor) clockSkew(hubTime, sent, got time.Time) {
	rtt := got.Sub(sent)
	local := sent.Add(rtt / 2)
	skew := hubTime.Sub(local)
	abs := skew
	if abs < 0 {
		abs = -abs
	}
	where := "ahead of"
	if skew < 0 {
		where = "behind"
	}
	detail := fmt.Sprintf("hub clock %s %s this machine's (± %s)", fmtDuration(abs.Round(time.Millisecond)), where, (rtt / 2).Round(time.Millisecond))
	if abs <= d.maxSkew+rtt/2 {
		d.add("clock skew", checkOK, detail, "")
		return
	}
	st := checkWarn
	if abs > time.Minute {
		st = checkFail
	}
	d.add("clock skew", st, detail,
		"synchronise the clocks of this machine and the hub's with NTP (e.g. `timedatectl set-ntp true`, or chrony): heartbeat IDs are compared at whole seconds and an ID in the hub's future is refused")
}

func (d *doctor) hubState(info *hubv1.GetHubInfoResponse) {
	detail := fmt.Sprintf("hub %s, schema version %d, %d agents, %d parked waits, time zone %s",
		info.GetVersion(), info.GetSchemaVersion(), info.GetAgents(), info.GetParkedWaiters(), info.GetTimeZone())
	switch {
	case info.GetSchemaVersion() <= 0:
		d.add("hub state", checkFail, detail, "the store has no migrations applied: see the hub's log at start-up")
	case info.GetLastTickError() != "":
		d.add("hub state", checkWarn, detail+"; last orchestrator tick failed: "+info.GetLastTickError(), "see the hub's log for the orchestrator's error")
	default:
		d.add("hub state", checkOK, detail, "")
	}
	if v := info.GetVersion(); v != hubversion.Version() {
		d.add("versions", checkWarn, fmt.Sprintf("hubctl %s, hub %s", hubversion.Version(), v), "use the hubctl built with the hub, so that both know the same API")
	}
}

// readyz asks the hub's HTTP endpoint whether the store is reachable and migrated.
func (d *doctor) readyz(ctx context.Context) {
	base := d.httpURL
	guessed := base == ""
	if guessed {
		var err error
		if base, err = guessHTTPURL(d.c.addr, d.c.useTLS); err != nil {
			d.add("readyz", checkSkip, err.Error(), "give the hub's HTTP address with --http URL")
			return
		}
	}
	target := strings.TrimRight(base, "/") + "/readyz"
	client, err := d.httpClient()
	if err != nil {
		d.add("readyz", checkFail, err.Error(), "")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, "GET", target, nil)
	if err != nil {
		d.add("readyz", checkFail, fmt.Sprintf("--http %q: %v", base, err), "give the hub's HTTP base URL, such as http://127.0.0.1:7701")
		return
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the message already
		}
		st, fix := checkFail, "check that the hub serves HTTP there (its --http-addr)"
		if guessed {
			// The HTTP address is only a guess: it may be elsewhere or off.
			st, fix = checkWarn, "if the hub serves HTTP elsewhere, give --http URL; if its HTTP is off (--http-addr off), ignore this"
		}
		d.add("readyz", st, fmt.Sprintf("GET %s: %v", target, err), fix)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var r struct{ Status, Error string }
	json.Unmarshal(body, &r)
	switch {
	case resp.StatusCode == http.StatusOK && r.Status == "ready":
		d.add("readyz", checkOK, target+": ready (store reachable, migrations applied)", "")
	case resp.StatusCode == http.StatusServiceUnavailable:
		d.add("readyz", checkFail, fmt.Sprintf("%s: not ready: %s", target, r.Error), "the hub cannot use its store: see its log (disk full? permissions on the data dir?)")
	default:
		d.add("readyz", checkFail, fmt.Sprintf("%s: HTTP %d %.200s", target, resp.StatusCode, body), "is --http the hub's HTTP address?")
	}
}

func (d *doctor) httpClient() (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if d.c.tlsCA != "" {
		pem, err := os.ReadFile(d.c.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("read --tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", d.c.tlsCA)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: d.timeout}, nil
}

// guessHTTPURL returns the hub's default HTTP address for a gRPC address:
// the same host, the next port (7700 → 7701).
func guessHTTPURL(grpcAddr string, useTLS bool) (string, error) {
	host, port, err := net.SplitHostPort(grpcAddr)
	if err != nil {
		return "", fmt.Errorf("cannot derive the HTTP address from %q: %v", grpcAddr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p >= 65535 {
		return "", errors.New("cannot derive the HTTP address from port " + port)
	}
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(p+1)), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

func restLines(s string) string {
	_, rest, _ := strings.Cut(s, "\n")
	return rest
}
