package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// setupEnv is a user's home and config directory for one test.
type setupEnv struct {
	home, config string
}

func newSetupEnv(t *testing.T) setupEnv {
	t.Helper()
	return setupEnv{home: t.TempDir(), config: t.TempDir()}
}

// run runs the hub binary with args in this environment and returns its
// output, failing the test if it fails.
func (e setupEnv) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(builtHub(t), args...)
	cmd.Env = append(os.Environ(), "HOME="+e.home, "XDG_CONFIG_HOME="+e.config, "HUB_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hub %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// copyDir copies the setup package's testdata/name into a fresh directory.
func copyDir(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("..", "..", "internal", "setup", "testdata", name)
	out, err := exec.Command("cp", "-R", src+"/.", dst).CombinedOutput()
	if err != nil {
		t.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	return dst
}

// settingsHook returns the command of the hub's hook for event in a
// Claude Code settings file.
func settingsHook(t *testing.T, path, event string) string {
	t.Helper()
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for _, g := range s.Hooks[event] {
		for _, h := range g.Hooks {
			if strings.Contains(h.Command, " hook ") {
				return h.Command
			}
		}
	}
	t.Fatalf("no hub hook for %s in %s", event, path)
	return ""
}

func TestSetupClaudeEndToEnd(t *testing.T) {
	h := startHookHub(t)
	env := newSetupEnv(t)
	proj := copyDir(t, "claude-project")
	settings := filepath.Join(proj, ".claude", "settings.json")
	before, _ := os.ReadFile(settings)

	// Dry run: a diff, nothing written, no agent created.
	out := env.run(t, "setup", "claude", "--project", proj, "--addr", h.addr, "--admin-token-file", h.adminToken, "--name", "carol", "--dry-run")
	if !strings.Contains(out, "+    \"hub\": {") || !strings.Contains(out, "hook claude Stop") {
		t.Errorf("dry run printed no diff adding the hub:\n%s", out)
	}
	if after, _ := os.ReadFile(settings); !bytes.Equal(after, before) {
		t.Errorf("dry run changed %s", settings)
	}
	tokenFile := filepath.Join(env.config, "agent-hub", "carol.token")
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Errorf("dry run wrote the token file (%v)", err)
	}

	// For real: the agent is created, its token kept in a 0600 file.
	out = env.run(t, "setup", "claude", "--project", proj, "--addr", h.addr, "--admin-token-file", h.adminToken, "--name", "carol")
	if !strings.Contains(out, "kept a backup: "+settings+".bak-") {
		t.Errorf("setup did not report the backup of %s:\n%s", settings, out)
	}
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, mode %v; want 0600", tokenFile, err, st.Mode())
	}
	token, _ := os.ReadFile(tokenFile)
	for _, f := range []string{settings, filepath.Join(proj, ".mcp.json")} {
		if b, _ := os.ReadFile(f); bytes.Contains(b, bytes.TrimSpace(token)) {
			t.Errorf("%s holds the agent token", f)
		}
	}

	// The hook written into the settings runs hub-hook beside the hub, and
	// works as the host runs it.
	if hook, want := settingsHook(t, settings, "Stop"), filepath.Join(filepath.Dir(builtHub(t)), "hub-hook")+" hook claude Stop "; !strings.HasPrefix(hook, want) {
		t.Errorf("the Stop hook runs %q; want hub-hook beside the hub: %q…", hook, want)
	}
	carol := agentClient(t, h.addr, strings.TrimSpace(string(token)))
	post(t, h.annC, &hubv1.PostMessageRequest{To: []string{"carol"}, Body: "welcome, carol"})
	payload, err := os.ReadFile(filepath.Join("testdata", "hooks", "claude-Stop.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", settingsHook(t, settings, "Stop"))
	cmd.Env = append(os.Environ(), "HUB_TOKEN=", "HUB_ADDR=")
	cmd.Stdin = bytes.NewReader(payload)
	hookOutput, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Stop hook as written: %v", err)
	}
	var o hookOut
	if err := json.Unmarshal(hookOutput, &o); err != nil || o.Decision != "block" || !strings.Contains(o.Reason, "welcome, carol") {
		t.Errorf("the Stop hook as written answered %s (%v), want a block naming the message", hookOutput, err)
	}
	if _, err := carol.MarkRead(t.Context(), &hubv1.MarkReadRequest{}); err != nil {
		t.Fatal(err)
	}

	// Again with the agent's token: nothing changes.
	out = env.run(t, "setup", "claude", "--project", proj, "--addr", h.addr, "--token", strings.TrimSpace(string(token)))
	if strings.Contains(out, "written") || strings.Count(out, "unchanged") != 3 {
		t.Errorf("second setup changed files:\n%s", out)
	}
}

// With a join code, setup registers the agent once, keeps its token in the
// 0600 file the configs name, and a second setup with the same code reuses
// that file instead of using the code again.
func TestSetupWithJoinCode(t *testing.T) {
	h := startHookHub(t)
	env := newSetupEnv(t)
	proj := t.TempDir()
	adminTok, err := os.ReadFile(h.adminToken)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mcpbridge.Dial(h.addr, strings.TrimSpace(string(adminTok)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	admin := hubv1.NewAdminServiceClient(conn)
	jc, err := admin.CreateJoinCode(t.Context(), &hubv1.CreateJoinCodeRequest{MaxUses: 2, Role: "builder"})
	if err != nil {
		t.Fatal(err)
	}

	out := env.run(t, "setup", "claude", "--project", proj, "--addr", h.addr, "--join", jc.GetCode(), "--name", "erin", "--dry-run")
	tokenFile := filepath.Join(env.config, "agent-hub", "erin.token")
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) || !strings.Contains(out, tokenFile) {
		t.Errorf("dry run with --join: token file %v, output:\n%s\nwant nothing written and the token file named", err, out)
	}
	env.run(t, "setup", "claude", "--project", proj, "--addr", h.addr, "--join", jc.GetCode(), "--name", "erin")
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v; want mode 0600", tokenFile, err)
	}
	token, _ := os.ReadFile(tokenFile)
	r, err := agentClient(t, h.addr, strings.TrimSpace(string(token))).GetStatus(t.Context(), &hubv1.GetStatusRequest{})
	if err != nil || r.GetStatus().GetAgent() != "erin" {
		t.Fatalf("the kept token: %v, agent %q; want erin's", err, r.GetStatus().GetAgent())
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".mcp.json")); !bytes.Contains(b, []byte(tokenFile)) {
		t.Errorf(".mcp.json does not name the token file %s:\n%s", tokenFile, b)
	}

	env.run(t, "setup", "claude", "--project", proj, "--addr", h.addr, "--join", jc.GetCode(), "--name", "erin")
	codes, err := admin.ListJoinCodes(t.Context(), &hubv1.ListJoinCodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range codes.GetJoinCodes() {
		if c.GetId() == jc.GetJoinCode().GetId() && c.GetUses() != 1 {
			t.Errorf("the code was used %d times by two setups of one agent, want 1", c.GetUses())
		}
	}
}

func TestSetupRefusesBadInput(t *testing.T) {
	h := startHookHub(t)
	env := newSetupEnv(t)
	proj := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"setup", "cursor", "--project", proj, "--addr", h.addr, "--token", h.bob}, "unknown host"},
		{[]string{"setup", "claude", "--project", proj, "--addr", h.addr, "--token", "wrong"}, "check the agent token"},
		{[]string{"setup", "claude", "--project", proj, "--addr", h.addr}, "no agent"},
		{[]string{"setup", "claude", "--project", proj, "--addr", h.addr, "--admin-token-file", h.adminToken}, "give its --name"},
		{[]string{"setup", "claude", "--project", proj, "--addr", h.addr, "--join", "ahj_unknown"}, "give its --name"},
		{[]string{"setup", "claude", "--project", proj, "--addr", h.addr, "--join", "ahj_unknown", "--name", "fay"}, "join code"},
		{[]string{"setup", "claude", "--project", proj, "--addr", h.addr, "--token", h.bob, "--name", "dan"}, "not both"},
		{[]string{"setup", "claude", "--project", proj, "--addr", h.addr, "--admin-token-file", h.adminToken, "--name", "ann"}, "create agent ann"},
		{[]string{"setup", "claude", "--project", filepath.Join(proj, "missing"), "--addr", h.addr, "--token", h.bob}, "not a directory"},
	} {
		cmd := exec.Command(builtHub(t), c.args...)
		cmd.Env = append(os.Environ(), "HOME="+env.home, "XDG_CONFIG_HOME="+env.config, "HUB_TOKEN=")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("hub %s: %v\n%s\nwant a failure saying %q", strings.Join(c.args[:2], " "), err, out, c.want)
		}
	}
	if entries, _ := os.ReadDir(proj); len(entries) != 0 {
		t.Errorf("refused setups wrote into the project: %v", entries)
	}
}

// TestSetupClaudeMCPListShowsTheHub runs Claude Code's own `claude mcp list`
// against the files setup wrote, in a project and for the user: the hub
// must show as connected. It needs Claude Code: `claude` on PATH or
// HUB_TEST_CLAUDE naming it (scripts/claude-mcp-list.sh installs it from
// npm into a temporary directory and runs this test).
func TestSetupClaudeMCPListShowsTheHub(t *testing.T) {
	claude := os.Getenv("HUB_TEST_CLAUDE")
	if claude == "" {
		var err error
		if claude, err = exec.LookPath("claude"); err != nil {
			t.Skip("Claude Code is not installed: run scripts/claude-mcp-list.sh")
		}
	}
	h := startHookHub(t)
	env := newSetupEnv(t)
	proj := copyDir(t, "claude-project")
	env.run(t, "setup", "claude", "--project", proj, "--addr", h.addr, "--token", h.bob)
	// Claude Code runs a project's servers once the user trusted the
	// folder (its first-start dialog); approving them is setup's part.
	trust := `{"projects":{"` + proj + `":{"hasTrustDialogAccepted":true}}}`
	if err := os.WriteFile(filepath.Join(env.home, ".claude.json"), []byte(trust), 0o600); err != nil {
		t.Fatal(err)
	}
	list := func(dir string) string {
		cmd := exec.Command(claude, "mcp", "list")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+env.home, "XDG_CONFIG_HOME="+env.config, "HUB_TOKEN=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude mcp list: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := list(proj); !hubConnected(out) || !strings.Contains(out, "github:") {
		t.Errorf("claude mcp list in the project:\n%s\nwant the hub connected and the github server kept", out)
	}

	// The user's config, merged into an existing ~/.claude.json.
	userHome := copyDir(t, "claude-user")
	env.home = userHome
	env.run(t, "setup", "claude", "--addr", h.addr, "--token", h.ann)
	if out := list(t.TempDir()); !hubConnected(out) || !strings.Contains(out, "filesystem:") {
		t.Errorf("claude mcp list for the user:\n%s\nwant the hub connected and the filesystem server kept", out)
	}
}

func hubConnected(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "hub: ") && strings.Contains(line, "Connected") {
			return true
		}
	}
	return false
}

// TestSetupSymlinks runs the real hub setup over the symlinks of the
// report: a project's .mcp.json linked to the user's ~/.claude.json is
// refused (the user's servers and their secrets never reach the project),
// and a user-level ~/.claude.json that is a dotfiles link stays a link,
// its target edited.
func TestSetupSymlinks(t *testing.T) {
	h := startHookHub(t)
	env := newSetupEnv(t)
	userConfig := `{"mcpServers": {"other": {"command": "other-mcp", "env": {"OTHER_TOKEN": "secret-of-another-server"}}}}`
	dot := filepath.Join(env.home, "dotfiles", "claude.json")
	if err := os.MkdirAll(filepath.Dir(dot), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, dot, userConfig)
	userLink := filepath.Join(env.home, ".claude.json")
	if err := os.Symlink(dot, userLink); err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	projLink := filepath.Join(proj, ".mcp.json")
	if err := os.Symlink(userLink, projLink); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(builtHub(t), "setup", "claude", "--project", proj, "--addr", h.addr, "--token", h.bob)
	cmd.Env = append(os.Environ(), "HOME="+env.home, "XDG_CONFIG_HOME="+env.config, "HUB_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), projLink+" is a symbolic link to "+dot+", outside the project") {
		t.Errorf("hub setup --project over a link to the user's config: %v\n%s\nwant a refusal naming the link and its target", err, out)
	}
	if b, _ := os.ReadFile(dot); string(b) != userConfig {
		t.Errorf("the user's config changed: %s", b)
	}
	if st, err := os.Lstat(projLink); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the project's link was replaced: %v", err)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude")); err == nil {
		t.Error("the refused setup wrote .claude/ into the project")
	}

	env.run(t, "setup", "claude", "--addr", h.addr, "--token", h.bob)
	if st, err := os.Lstat(userLink); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("~/.claude.json is no longer the dotfiles link: %v", err)
	}
	b, _ := os.ReadFile(dot)
	if !strings.Contains(string(b), `"hub"`) || !strings.Contains(string(b), "secret-of-another-server") {
		t.Errorf("the link's target after setup:\n%s\nwant the hub beside the other server", b)
	}
}
