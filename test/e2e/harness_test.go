package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binaries are the built hub and hubctl.
type binaries struct{ hub, hubHook, hubctl string }

// buildBinaries builds cmd/hub, cmd/hub-hook and cmd/hubctl into t.TempDir().
func buildBinaries(t *testing.T) binaries {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			t.Skip("no go command to build the binaries with")
		}
	}
	dir := t.TempDir()
	b := binaries{hub: filepath.Join(dir, "hub"), hubHook: filepath.Join(dir, "hub-hook"), hubctl: filepath.Join(dir, "hubctl")}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, p := range []struct{ out, pkg string }{{b.hub, "github.com/agenthub/hub/cmd/hub"}, {b.hubHook, "github.com/agenthub/hub/cmd/hub-hook"}, {b.hubctl, "github.com/agenthub/hub/cmd/hubctl"}} {
		wg.Go(func() {
			cmd := exec.Command(goBin, "build", "-o", p.out, p.pkg)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go build %s: %v\n%s", p.pkg, err, out)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// freePort returns a loopback address with a port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// lockedBuffer collects a process's output for failure reports.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hubProc is a running hub binary.
type hubProc struct {
	bin      binaries
	dataDir  string
	grpcAddr string
	httpAddr string
	cmd      *exec.Cmd
	log      *lockedBuffer
	exited   chan struct{}
	exitErr  error
}

// startHub starts the hub binary on fresh loopback ports and waits for /healthz.
func startHub(t *testing.T, bin binaries, extra ...string) *hubProc {
	t.Helper()
	h := &hubProc{bin: bin, dataDir: t.TempDir(), log: &lockedBuffer{}, exited: make(chan struct{})}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		h.grpcAddr, h.httpAddr = freePort(t), freePort(t)
		args := append([]string{"--data-dir", h.dataDir, "--grpc-addr", h.grpcAddr, "--http-addr", h.httpAddr}, extra...)
		h.cmd = exec.Command(bin.hub, args...)
		h.cmd.Env = cleanEnv()
		h.cmd.Stdout, h.cmd.Stderr = h.log, h.log
		if err = h.cmd.Start(); err != nil {
			t.Fatalf("start hub: %v", err)
		}
		h.exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}) {
			h.exitErr = cmd.Wait()
			close(exited)
		}(h.cmd, h.exited)
		if err = h.waitHealthy(30 * time.Second); err == nil {
			break
		}
		h.kill()
	}
	if err != nil {
		t.Fatalf("hub did not become healthy: %v\nlog:\n%s", err, h.log)
	}
	t.Cleanup(func() {
		h.kill()
		if t.Failed() {
			t.Logf("hub log:\n%s", h.log)
		}
	})
	return h
}

func (h *hubProc) kill() {
	select {
	case <-h.exited:
	default:
		h.cmd.Process.Kill()
		<-h.exited
	}
}

func (h *hubProc) waitHealthy(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-h.exited:
			return fmt.Errorf("hub exited: %v", h.exitErr)
		default:
		}
		resp, err := client.Get("http://" + h.httpAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("GET /healthz: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cleanEnv is the environment without HUB_* variables of the caller's shell.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HUB_") {
			env = append(env, kv)
		}
	}
	return env
}

// ctlResult is one hubctl run.
type ctlResult struct {
	code           int
	stdout, stderr string
}

// hubctl runs the hubctl binary against h with extra environment variables.
func (h *hubProc) hubctl(t *testing.T, env []string, args ...string) ctlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin.hubctl, args...)
	cmd.Env = append(cleanEnv(), "HUB_ADDR="+h.grpcAddr, "HUB_DATA_DIR="+h.dataDir)
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run hubctl %q: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return ctlResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// must fails the test unless hubctl exited 0.
func (r ctlResult) must(t *testing.T, args ...string) ctlResult {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("hubctl %q: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// call makes an HTTP request to the hub with an optional bearer token and
// JSON body, and returns the status code and the decoded JSON reply; it
// fails the test on a transport error.
func (h *hubProc) call(t *testing.T, ctx context.Context, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	code, m, err := h.do(ctx, method, path, token, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, m
}

// do is call for goroutines: it returns the error instead of failing.
func (h *hubProc) do(ctx context.Context, method, path, token string, body any) (int, map[string]any, error) {
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
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: read reply: %w", method, path, err)
	}
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return resp.StatusCode, nil, fmt.Errorf("%s %s: reply is not a JSON object: %w\n%s", method, path, err, raw)
		}
	}
	return resp.StatusCode, m, nil
}

// sigterm sends SIGTERM and returns how the process ended, or fails after limit.
func (h *hubProc) sigterm(t *testing.T, limit time.Duration) error {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-h.exited:
		return h.exitErr
	case <-time.After(limit):
		t.Fatalf("hub still running %v after SIGTERM\nlog:\n%s", limit, h.log)
		return nil
	}
}
