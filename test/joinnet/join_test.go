// Package joinnet proves that an agent on another machine joins the hub
// with the one line hubctl join-codes create prints: the hub in one
// network namespace on a non-loopback address with no TLS flags, "the
// other machine" in a second namespace, the two joined by a veth pair on
// 10.77.0.0/30. It needs root and iproute2 and is skipped, saying why,
// only where the namespaces cannot be made; CI runs it as root in its
// go test -race ./... (.ci/run installs iproute2 before).
package joinnet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The private link between the two namespaces.
const (
	hubIP    = "10.77.0.1"
	agentIP  = "10.77.0.2"
	grpcAddr = hubIP + ":7700"
	httpAddr = hubIP + ":7701"
)

func TestJoinFromAnotherMachine(t *testing.T) {
	if why := cannotMakeNamespaces(); why != "" {
		t.Skip("skipped: " + why)
	}
	bins := build(t)
	n := makeNet(t)

	// The hub, on the link's address, with no TLS flag.
	data := t.TempDir()
	hubLog := &lockedBuffer{}
	hub := exec.Command("ip", "netns", "exec", n.hub, bins.hub, "serve", "--data-dir", data,
		"--grpc-addr", grpcAddr, "--http-addr", httpAddr, "--log-level", "info")
	hub.Env = cleanEnv(t.TempDir())
	hub.Stdout, hub.Stderr = hubLog, hubLog
	if err := hub.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hub.Process.Signal(syscall.SIGTERM)
		hub.Wait()
		if t.Failed() {
			t.Logf("hub's log:\n%s", hubLog.String())
		}
	})
	admin := func(args ...string) (string, error) {
		cmd := exec.Command("ip", append([]string{"netns", "exec", n.hub, bins.hubctl, "--addr", grpcAddr, "--data-dir", data}, args...)...)
		cmd.Env = cleanEnv(t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	var info string
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := admin("info")
		if err == nil {
			info = out
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hubctl info on the hub's machine: %v\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fpRE := regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	fp := fpRE.FindString(info)
	if fp == "" {
		t.Fatalf("hubctl info shows no CA fingerprint:\n%s", info)
	}
	for !strings.Contains(hubLog.String(), "ca_fingerprint="+fp) {
		if time.Now().After(deadline) {
			t.Fatalf("the hub did not print its CA fingerprint %s at start:\n%s", fp, hubLog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(hubLog.String(), "https://"+httpAddr+"/") {
		t.Errorf("the hub's dashboard address is not https:\n%s", hubLog.String())
	}

	// Plain text is refused on both ports, from the other machine.
	plainHome := t.TempDir()
	if out, err := n.agentRun(plainHome, bins.hubctl, "--addr", grpcAddr, "--admin-token", "x", "info"); err == nil {
		t.Errorf("plain-text gRPC from the other machine answered:\n%s", out)
	}
	if out, err := n.agentRun(plainHome, bins.hub, "health", "--addr", httpAddr); err == nil {
		t.Errorf("plain-text HTTP from the other machine answered ready:\n%s", out)
	}

	created, err := admin("join-codes", "create", "--hub-addr", grpcAddr, "--max-uses", "2")
	if err != nil {
		t.Fatalf("join-codes create: %v\n%s", err, created)
	}
	var line []string
	for _, l := range strings.Split(created, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "hub setup ") {
			line = strings.Fields(l)
		}
	}
	if line == nil || !strings.Contains(strings.Join(line, " "), "--ca-fingerprint "+fp) || !strings.Contains(strings.Join(line, " "), grpcAddr) {
		t.Fatalf("join-codes create printed no hub setup line with the address and %s:\n%s", fp, created)
	}
	setup := func(home string, line []string) (string, error) {
		args := append([]string{bins.hub}, line[1:]...)
		return n.agentRun(home, append(args, "--name", "remote", "--hub", bins.hub)...)
	}

	// A flipped fingerprint: refused, naming both, nothing written.
	bad := append([]string(nil), line...)
	flipped := fp[:len(fp)-1] + map[bool]string{true: "1", false: "0"}[fp[len(fp)-1] == '0']
	for i, a := range bad {
		if a == fp {
			bad[i] = flipped
		}
	}
	badHome := t.TempDir()
	out, err := setup(badHome, bad)
	if err == nil || !strings.Contains(out, flipped) || !strings.Contains(out, fp) {
		t.Errorf("the line with a flipped fingerprint: %v\n%s\nwant a refusal naming %s and %s", err, out, flipped, fp)
	}
	if files := written(t, badHome); len(files) > 0 {
		t.Errorf("the refused line wrote %q", files)
	}

	// The line as printed, with a name, in a fresh home.
	home := t.TempDir()
	if out, err := setup(home, line); err != nil {
		t.Fatalf("the join line on the other machine: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "agent-hub", "ca", "10.77.0.1_7700.pem")); err != nil {
		t.Errorf("the hub's CA is not kept in the config dir: %v", err)
	}
	if out, err := admin("agent", "list"); err != nil || !strings.Contains(out, "remote") {
		t.Errorf("the admin does not see the agent registered: %v\n%s", err, out)
	}
	// hubctl on the other machine finds the kept CA for the address.
	tok, err := os.ReadFile(filepath.Join(home, ".config", "agent-hub", "remote.token"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := n.agentRun(home, bins.hubctl, "--addr", grpcAddr, "--token", strings.TrimSpace(string(tok)), "status"); err != nil || !strings.Contains(out, "remote") {
		t.Errorf("hubctl status as the agent on the other machine: %v\n%s", err, out)
	}
	// HTTPS with the same CA.
	if out, err := n.agentRun(home, bins.hub, "health", "--addr", httpAddr, "--tls-ca", filepath.Join(home, ".config", "agent-hub", "ca", "10.77.0.1_7700.pem")); err != nil {
		t.Errorf("hub health over HTTPS with the kept CA: %v\n%s", err, out)
	}

	// The hub mcp the line configured, as Claude Code would start it.
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	srv, ok := cfg.MCPServers["hub"]
	if !ok {
		t.Fatalf("no hub server in ~/.claude.json:\n%s", b)
	}
	const body = "hello from the other machine"
	if err := n.postOverMCP(home, srv.Command, srv.Args, srv.Env, body); err != nil {
		t.Fatalf("post over the configured hub mcp: %v", err)
	}
	msgs, err := admin("messages", "--channel", "#ops")
	if err != nil || !strings.Contains(msgs, body) || !strings.Contains(msgs, "remote") {
		t.Errorf("the admin does not see the message from remote: %v\n%s", err, msgs)
	}
}

// cleanEnv is a minimal environment with home as HOME and no XDG
// directories or hub settings of the machine running the test.
func cleanEnv(home string) []string {
	return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
}

// written lists the files under dir.
func written(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	return files
}

// net is the two namespaces.
type netns struct{ hub, agent string }

// makeNet makes the two namespaces joined by a veth pair, each end with
// its address on 10.77.0.0/30, and removes them (their processes killed
// by PID first) when the test ends.
func makeNet(t *testing.T) netns {
	t.Helper()
	prefix := fmt.Sprintf("hubj%d", os.Getpid())
	n := netns{hub: prefix + "-hub", agent: prefix + "-agent"}
	t.Cleanup(func() {
		for _, ns := range []string{n.hub, n.agent} {
			out, _ := exec.Command("ip", "netns", "pids", ns).Output()
			for _, f := range strings.Fields(string(out)) {
				var pid int
				if _, err := fmt.Sscan(f, &pid); err == nil && pid != os.Getpid() {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	for _, s := range [][]string{
		{"netns", "add", n.hub},
		{"netns", "add", n.agent},
		{"-n", n.hub, "link", "set", "lo", "up"},
		{"-n", n.agent, "link", "set", "lo", "up"},
		{"-n", n.hub, "link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", n.agent},
		{"-n", n.hub, "addr", "add", hubIP + "/30", "dev", "veth0"},
		{"-n", n.agent, "addr", "add", agentIP + "/30", "dev", "veth0"},
		{"-n", n.hub, "link", "set", "veth0", "up"},
		{"-n", n.agent, "link", "set", "veth0", "up"},
	} {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(s, " "), err, out)
		}
	}
	return n
}

// agentRun runs a command on the other machine with home as HOME.
func (n netns) agentRun(home string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.agent}, args...)...)
	cmd.Env = cleanEnv(home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// postOverMCP starts the MCP server command on the other machine as a host
// would (its environment, HOME home), initializes a session and posts body
// to #ops with the post_message tool.
func (n netns) postOverMCP(home, command string, args []string, env map[string]string, body string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.agent, command}, args...)...)
	cmd.Env = cleanEnv(home)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	send := func(v any) error {
		b, _ := json.Marshal(v)
		_, err := stdin.Write(append(b, '\n'))
		return err
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	answer := func(id int) (json.RawMessage, error) {
		for lines.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(lines.Bytes(), &m) != nil || m.ID == nil || *m.ID != id {
				continue
			}
			if m.Error != nil {
				return nil, fmt.Errorf("call %d: %s", id, m.Error)
			}
			return m.Result, nil
		}
		return nil, fmt.Errorf("hub mcp ended before answering call %d: %v\n%s", id, lines.Err(), stderr.String())
	}
	if err := send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "joinnet", "version": "1"},
	}}); err != nil {
		return err
	}
	if _, err := answer(1); err != nil {
		return err
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if err := send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
		"name": "post_message", "arguments": map[string]any{"channel": "#ops", "body": body},
	}}); err != nil {
		return err
	}
	res, err := answer(2)
	if err != nil {
		return err
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res, &r); r.IsError {
		return fmt.Errorf("post_message failed: %s\n%s", res, stderr.String())
	}
	return nil
}

// binaries are the hub and hubctl built for the test.
type binaries struct{ hub, hubctl string }

// build builds bin/hub and bin/hubctl into a temporary directory (the
// namespaces run the real binaries).
func build(t *testing.T) binaries {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	b := binaries{hub: filepath.Join(dir, "hub"), hubctl: filepath.Join(dir, "hubctl")}
	for out, pkg := range map[string]string{b.hub: "github.com/agenthub/hub/cmd/hub", b.hubctl: "github.com/agenthub/hub/cmd/hubctl"} {
		cmd := exec.Command(goBin, "build", "-o", out, pkg)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, msg)
		}
	}
	return b
}

// cannotMakeNamespaces says why this machine cannot make the two
// namespaces, or "".
func cannotMakeNamespaces() string {
	if os.Geteuid() != 0 {
		return "network namespaces need root (CI runs this test as root)"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "ip is missing (Debian's iproute2; .ci/run installs it)"
	}
	probe := fmt.Sprintf("hubj%d-probe", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		return fmt.Sprintf("cannot create a network namespace here: %v: %s", err, bytes.TrimSpace(out))
	}
	defer exec.Command("ip", "netns", "del", probe).Run()
	if out, err := exec.Command("ip", "-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1").CombinedOutput(); err != nil {
		return fmt.Sprintf("cannot create a veth pair in a network namespace: %v: %s", err, bytes.TrimSpace(out))
	}
	return ""
}

// lockedBuffer is an io.Writer safe for a process's two streams.
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

var _ io.Writer = (*lockedBuffer)(nil)
