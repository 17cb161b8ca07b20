package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExposure runs the binaries the way an exposed hub meets the world:
// a second hub on a held data dir, connections up to the fd limit, and a
// token revoked under a parked wait.
func TestExposure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	bin := buildBinaries(t)

	t.Run("profiles on loopback only", func(t *testing.T) {
		// On an address others reach they are refused, and the hub with them.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin.hub, "--data-dir", t.TempDir(), "--grpc-addr", freePort(t), "--http-addr", freePort(t), "--pprof-addr", "0.0.0.0:0")
		cmd.Env = cleanEnv()
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--pprof-addr \"0.0.0.0:0\": give a loopback address") {
			t.Fatalf("hub --pprof-addr 0.0.0.0:0: %v\n%s\nwant it refused, naming a loopback address", err, out)
		}
		addr := freePort(t)
		startHub(t, bin, "--pprof-addr", addr)
		get := func(host string) (int, string) {
			t.Helper()
			req, err := http.NewRequest("GET", "http://"+addr+"/debug/pprof/goroutine?debug=1", nil)
			if err != nil {
				t.Fatal(err)
			}
			if host != "" {
				req.Host = host
			}
			resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b strings.Builder
			if _, err := io.Copy(&b, resp.Body); err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, b.String()
		}
		if code, body := get(""); code != http.StatusOK || !strings.Contains(body, "goroutine profile:") || !strings.Contains(body, "agenthub/hub/internal/store/writer") {
			t.Errorf("GET the goroutines: %d\n%.300s\nwant 200 with the hub's goroutines (its store's writer)", code, body)
		}
		// A page that reached the port through DNS rebinding names its own host.
		if code, body := get("rebind.example:80"); code != http.StatusForbidden || !strings.Contains(body, "loopback name only") {
			t.Errorf("GET with Host rebind.example: %d %q, want 403 saying loopback names only", code, body)
		}
	})

	t.Run("second hub on a held data dir", func(t *testing.T) {
		h := startHub(t, bin)
		cmd := exec.Command(bin.hub, "--data-dir", h.dataDir, "--grpc-addr", freePort(t), "--http-addr", freePort(t))
		cmd.Env = cleanEnv()
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatal("the second hub did not exit: it runs beside the first on one data dir")
		}
		want := fmt.Sprintf("in use by another hub (pid %d", h.cmd.Process.Pid)
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("second hub: %v\n%s\nwant an exit naming %q", err, out, want)
		}
	})

	t.Run("connections up to the fd limit", func(t *testing.T) {
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			t.Skip("prlimit (util-linux) is not installed")
		}
		// The hub under a 256-descriptor limit it cannot raise.
		wrapper := filepath.Join(t.TempDir(), "hub-fd256")
		script := fmt.Sprintf("#!/bin/sh\nexec %s --nofile=256:256 %s \"$@\"\n", prlimit, bin.hub)
		if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
		h := startHub(t, binaries{hub: wrapper, hubctl: bin.hubctl})
		admin := strings.TrimSpace(string(must(os.ReadFile(h.dataDir + "/admin.token"))))
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for range 3000 { // far past the limit
			c, err := net.DialTimeout("tcp", h.httpAddr, 2*time.Second)
			if err != nil {
				continue // a full accept queue may refuse: that is the flood's problem
			}
			conns = append(conns, c)
		}
		// New connections, as a probe or an admin's hubctl would open (not
		// ones kept alive from before the flood).
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		for _, path := range []string{"/healthz", "/v1/admin/info"} {
			req, _ := http.NewRequest("GET", "http://"+h.httpAddr+path, nil)
			req.Header.Set("Authorization", "Bearer "+admin)
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("GET %s under a connection flood: %v", path, err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s under a connection flood: %d", path, resp.StatusCode)
			}
		}
	})

	t.Run("hubctl messages prune", func(t *testing.T) {
		h := startHub(t, bin)
		admin := strings.TrimSpace(string(must(os.ReadFile(h.dataDir + "/admin.token"))))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.call(t, ctx, "POST", "/v1/admin/agents", admin, map[string]any{"name": "bob"})
		for range 3 {
			if code, body := h.call(t, ctx, "POST", "/v1/admin/messages", admin, map[string]any{"to": []string{"bob"}, "body": "old"}); code != http.StatusOK {
				t.Fatalf("post: %d %v", code, body)
			}
		}
		if r := h.hubctl(t, nil, "messages", "prune", "--before", "2999-01-01T00:00:00Z"); r.code == 0 || !strings.Contains(r.stderr, "in the future") {
			t.Errorf("prune before a future time: exit %d, %s", r.code, r.stderr)
		}
		time.Sleep(1100 * time.Millisecond) // RFC 3339 has whole seconds
		r := h.hubctl(t, nil, "messages", "prune", "--before", time.Now().UTC().Format(time.RFC3339)).must(t, "messages", "prune")
		if !strings.Contains(r.stdout, "deleted 3 messages") {
			t.Errorf("prune: %q, want 3 deleted", r.stdout)
		}
	})

	t.Run("revoked token ends its parked wait", func(t *testing.T) {
		h := startHub(t, bin)
		admin := strings.TrimSpace(string(must(os.ReadFile(h.dataDir + "/admin.token"))))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		code, body := h.call(t, ctx, "POST", "/v1/admin/agents", admin, map[string]any{"name": "bob"})
		if code != http.StatusOK {
			t.Fatalf("create bob: %d %v", code, body)
		}
		tok, _ := body["token"].(string)
		type reply struct {
			code int
			body map[string]any
		}
		c := make(chan reply, 1)
		go func() {
			code, body, _ := h.do(ctx, "POST", "/v1/messages:wait", tok, map[string]any{"timeout_seconds": 60})
			c <- reply{code, body}
		}()
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, info := h.call(t, ctx, "GET", "/v1/admin/info", admin, nil)
			if n, _ := info["parked_waiters"].(string); n == "1" || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if code, body := h.call(t, ctx, "POST", "/v1/admin/agents/bob:revokeToken", admin, map[string]any{}); code != http.StatusOK {
			t.Fatalf("revoke: %d %v", code, body)
		}
		select {
		case r := <-c:
			if r.code != http.StatusUnauthorized {
				t.Errorf("parked wait after the revocation: %d %v, want 401", r.code, r.body)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the parked wait of a revoked token did not end (it would run to its 60 s timeout)")
		}
	})
}
