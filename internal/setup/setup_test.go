package setup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// copyTree copies testdata/name into a fresh directory and returns it.
func copyTree(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not JSON after setup: %v", path, err)
	}
	return m
}

// keyOrder returns the top-level keys of the JSON object in path, in order.
func keyOrder(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseObject(b)
	if err != nil {
		t.Fatal(err)
	}
	return o.keys
}

// hookCommands lists the commands of hooks[event] in a settings object.
func hookCommands(settings map[string]any, event string) []string {
	var out []string
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			c, _ := h.(map[string]any)["command"].(string)
			out = append(out, c)
		}
	}
	return out
}

func apply(t *testing.T, o Options) []Change {
	t.Helper()
	changes, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(changes, time.Date(2026, 11, 23, 16, 30, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	return changes
}

// checkIdempotent plans again and wants no change at all.
func checkIdempotent(t *testing.T, o Options) {
	t.Helper()
	again, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again {
		if c.Changed() {
			t.Errorf("second setup changes %s:\n%s", c.Path, diff(c.Path, string(c.Old), string(c.New)))
		}
	}
}

func TestSetupClaudeProjectKeepsServersAndHooks(t *testing.T) {
	dir := copyTree(t, "claude-project")
	o := Options{Host: "claude", Project: dir, Home: t.TempDir(), HubPath: "/opt/hub/bin/hub", Addr: "127.0.0.1:7700", TokenFile: "/home/dev/.config/agent-hub/dev.token"}
	settingsPath := filepath.Join(dir, ".claude", "settings.json")
	origSettings, _ := os.ReadFile(settingsPath)
	orderBefore := keyOrder(t, settingsPath)
	changes := apply(t, o)
	if len(changes) != 2 {
		t.Fatalf("%d changes, want .mcp.json and .claude/settings.json", len(changes))
	}

	mcp := readJSON(t, filepath.Join(dir, ".mcp.json"))["mcpServers"].(map[string]any)
	for _, name := range []string{"github", "sentry", "hub"} {
		if mcp[name] == nil {
			t.Errorf(".mcp.json lost or lacks server %q: %v", name, mcp)
		}
	}
	if env := mcp["github"].(map[string]any)["env"].(map[string]any); env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "${GITHUB_TOKEN}" {
		t.Errorf("github server's env changed: %v", env)
	}
	hub := mcp["hub"].(map[string]any)
	if hub["command"] != o.HubPath || !slices.Equal(toStrings(hub["args"]), []string{"mcp", "--token-file", o.TokenFile}) || hub["type"] != "stdio" {
		t.Errorf("hub server = %v", hub)
	}
	if env := hub["env"].(map[string]any); env["HUB_ADDR"] != o.Addr || len(env) != 1 {
		t.Errorf("hub server env = %v, want HUB_ADDR only (the token stays in its file)", env)
	}

	settings := readJSON(t, settingsPath)
	if got := toStrings(settings["enabledMcpjsonServers"]); !slices.Equal(got, []string{"github", "hub"}) {
		t.Errorf("enabledMcpjsonServers = %v, want github then hub", got)
	}
	if allow := toStrings(settings["permissions"].(map[string]any)["allow"]); len(allow) != 2 {
		t.Errorf("permissions changed: %v", allow)
	}
	post := hookCommands(settings, "PostToolUse")
	if len(post) != 2 || !strings.HasPrefix(post[0], "gofmt") || !strings.Contains(post[1], "hook claude PostToolUse --addr 127.0.0.1:7700 --token-file /home/dev/.config/agent-hub/dev.token") {
		t.Errorf("PostToolUse hooks = %q, want the gofmt hook then the hub's", post)
	}
	stop := hookCommands(settings, "Stop")
	if len(stop) != 2 || !strings.HasPrefix(stop[0], "notify-send") || !strings.HasPrefix(stop[1], "/opt/hub/bin/hub hook claude Stop") {
		t.Errorf("Stop hooks = %q", stop)
	}
	for _, e := range []string{"SessionStart", "UserPromptSubmit"} {
		if c := hookCommands(settings, e); len(c) != 1 {
			t.Errorf("%s hooks = %q, want the hub's", e, c)
		}
	}
	if got := keyOrder(t, settingsPath); !slices.Equal(got, orderBefore) {
		t.Errorf("top-level keys reordered: %v, was %v", got, orderBefore)
	}
	bak := settingsPath + ".bak-20261123-163000"
	if b, err := os.ReadFile(bak); err != nil || string(b) != string(origSettings) {
		t.Errorf("backup %s = %q, %v; want the original file", bak, b, err)
	}
	checkIdempotent(t, o)

	// Another hub binary later: its entries replace the old ones, none doubled.
	o.HubPath = "/usr/local/bin/hub"
	apply(t, o)
	settings = readJSON(t, settingsPath)
	if stop := hookCommands(settings, "Stop"); len(stop) != 2 || !strings.HasPrefix(stop[1], "/usr/local/bin/hub hook") {
		t.Errorf("after a second setup with another binary, Stop hooks = %q", stop)
	}
}

func TestSetupClaudeUser(t *testing.T) {
	home := copyTree(t, "claude-user")
	o := Options{Host: "claude", Home: home, HubPath: "/opt/hub/bin/hub", Addr: "127.0.0.1:7700", TokenFile: "/t/dev.token"}
	apply(t, o)
	cfg := readJSON(t, filepath.Join(home, ".claude.json"))
	if cfg["numStartups"] != float64(42) || cfg["projects"] == nil {
		t.Errorf("~/.claude.json lost its state: %v", cfg)
	}
	servers := cfg["mcpServers"].(map[string]any)
	if servers["filesystem"] == nil || servers["hub"] == nil {
		t.Errorf("mcpServers = %v, want filesystem and hub", servers)
	}
	settings := readJSON(t, filepath.Join(home, ".claude", "settings.json"))
	if settings["enabledMcpjsonServers"] != nil {
		t.Errorf("user settings got enabledMcpjsonServers (a project setting)")
	}
	if c := hookCommands(settings, "UserPromptSubmit"); len(c) != 2 || c[0] != "~/.claude/hooks/date-context.sh" {
		t.Errorf("UserPromptSubmit hooks = %q", c)
	}
	if c := hookCommands(settings, "Notification"); len(c) != 2 || !strings.HasPrefix(c[0], "notify-send") || !strings.Contains(c[1], "hook claude Notification") {
		t.Errorf("Notification hooks = %q, want the user's one untouched, then the hub's", c)
	}
	checkIdempotent(t, o)
}

// A permission request's hook waits for a person: the host's time-out is
// set above the wait, which the command carries.
func TestSetupPermissionRequestWaitsBelowTheHostsTimeout(t *testing.T) {
	for _, host := range []string{"claude", "codex"} {
		t.Run(host, func(t *testing.T) {
			dir := t.TempDir()
			o := Options{Host: host, Project: dir, Home: t.TempDir(), HubPath: "/opt/hub/bin/hub", Addr: "127.0.0.1:7700", TokenFile: "/t/dev.token", ApprovalWait: 90 * time.Second}
			apply(t, o)
			path := filepath.Join(dir, ".claude", "settings.json")
			if host == "codex" {
				path = filepath.Join(dir, ".codex", "hooks.json")
			}
			settings := readJSON(t, path)
			groups := settings["hooks"].(map[string]any)["PermissionRequest"].([]any)
			h := groups[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
			if want := "/opt/hub/bin/hub hook " + host + " PermissionRequest --addr 127.0.0.1:7700 --token-file /t/dev.token --approval-wait 1m30s"; h["command"] != want {
				t.Errorf("command = %q, want %q", h["command"], want)
			}
			if h["timeout"] != float64(100) {
				t.Errorf("timeout = %v, want 100 (seconds: the 90 s wait and 10 more)", h["timeout"])
			}
			if c := hookCommands(settings, "Stop"); len(c) != 1 || strings.Contains(c[0], "approval-wait") {
				t.Errorf("Stop hooks = %q, want the hub's without a wait", c)
			}
		})
	}
}

func TestSetupGemini(t *testing.T) {
	dir := copyTree(t, "gemini")
	o := Options{Host: "gemini", Project: dir, Home: t.TempDir(), HubPath: "/opt/hub/bin/hub", Addr: "127.0.0.1:7700", TokenFile: "/t/dev.token"}
	apply(t, o)
	s := readJSON(t, filepath.Join(dir, ".gemini", "settings.json"))
	servers := s["mcpServers"].(map[string]any)
	if servers["playwright"] == nil || servers["hub"] == nil || servers["hub"].(map[string]any)["type"] != nil {
		t.Errorf("mcpServers = %v", servers)
	}
	if s["general"].(map[string]any)["vimMode"] != true {
		t.Errorf("general settings changed: %v", s["general"])
	}
	if c := hookCommands(s, "BeforeTool"); len(c) != 1 {
		t.Errorf("BeforeTool hooks = %q, want the user's one", c)
	}
	after := hookCommands(s, "AfterAgent")
	if len(after) != 2 || !strings.Contains(after[1], "hook gemini AfterAgent") {
		t.Errorf("AfterAgent hooks = %q", after)
	}
	for _, e := range []string{"SessionStart", "BeforeAgent", "AfterTool"} {
		if c := hookCommands(s, e); len(c) != 1 || !strings.Contains(c[0], "hook gemini "+e) {
			t.Errorf("%s hooks = %q", e, c)
		}
	}
	// Gemini CLI's hook time-outs are in milliseconds.
	groups := s["hooks"].(map[string]any)["AfterTool"].([]any)
	if to := groups[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["timeout"]; to != float64(5000) {
		t.Errorf("gemini hook timeout = %v, want 5000 (ms)", to)
	}
	checkIdempotent(t, o)
}

func TestSetupCodex(t *testing.T) {
	dir := copyTree(t, "codex")
	o := Options{Host: "codex", Project: dir, Home: t.TempDir(), HubPath: "/opt/hub/bin/hub", Addr: "127.0.0.1:7700", TokenFile: "/t/dev.token"}
	orig := string(mustRead(t, filepath.Join(dir, ".codex", "config.toml")))
	apply(t, o)
	toml := string(mustRead(t, filepath.Join(dir, ".codex", "config.toml")))
	if !strings.HasPrefix(toml, strings.TrimRight(orig, "\n")) {
		t.Errorf("config.toml lost or changed what was there:\n%s", toml)
	}
	// The hub's own tools approved: Codex asks no person about them.
	want := "[mcp_servers.hub]\ncommand = \"/opt/hub/bin/hub\"\nargs = [\"mcp\", \"--token-file\", \"/t/dev.token\"]\nenv = { HUB_ADDR = \"127.0.0.1:7700\" }\ndefault_tools_approval_mode = \"approve\"\n"
	if !strings.HasSuffix(toml, want) || strings.Count(toml, "[mcp_servers.hub]") != 1 {
		t.Errorf("config.toml =\n%s\nwant it to end with\n%s", toml, want)
	}
	hooks := readJSON(t, filepath.Join(dir, ".codex", "hooks.json"))
	if c := hookCommands(hooks, "PreToolUse"); len(c) != 1 {
		t.Errorf("PreToolUse hooks = %q, want the user's one", c)
	}
	if c := hookCommands(hooks, "Stop"); len(c) != 1 || !strings.Contains(c[0], "hook codex Stop") {
		t.Errorf("Stop hooks = %q", c)
	}
	// Codex's SessionEnd, with the at most 3 s it allows there.
	if c := hookCommands(hooks, "SessionEnd"); len(c) != 1 || !strings.Contains(c[0], "hook codex SessionEnd") {
		t.Errorf("SessionEnd hooks = %q", c)
	}
	end := hooks["hooks"].(map[string]any)["SessionEnd"].([]any)
	if to := end[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["timeout"]; to != float64(3) {
		t.Errorf("codex SessionEnd timeout = %v, want 3 (s)", to)
	}
	checkIdempotent(t, o)

	// A hand-written hub table in the middle, with a subtable, is replaced.
	mid := "model = \"o3\"\n\n[mcp_servers.hub]\ncommand = \"hub\"\n\n[mcp_servers.hub.env]\nHUB_TOKEN = \"pasted\"\n\n[mcp_servers.other]\ncommand = \"other\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".codex", "config.toml"), []byte(mid), 0o644); err != nil {
		t.Fatal(err)
	}
	apply(t, o)
	toml = string(mustRead(t, filepath.Join(dir, ".codex", "config.toml")))
	if strings.Contains(toml, "pasted") || !strings.Contains(toml, "[mcp_servers.other]\ncommand = \"other\"") || strings.Count(toml, "[mcp_servers.hub") != 1 {
		t.Errorf("config.toml after replacing a hand-written hub table:\n%s", toml)
	}
}

func TestSetupRefusesWhatItCannotMerge(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"not JSON", "{\"hooks\": ", "EOF"},
		{"an array", "[1, 2]", "not an object"},
		{"hooks not an object", `{"hooks": []}`, `"hooks" is not a JSON object`},
		{"event not a list", `{"hooks": {"AfterAgent": {"hooks": []}}}`, "hooks.AfterAgent is not a list"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, ".gemini", "settings.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Plan(Options{Host: "gemini", Project: dir, Home: dir, HubPath: "/h/hub", Addr: "a:1", TokenFile: "/t"})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Plan error = %v, want one naming %s and saying %q", c.name, err, path, c.want)
		}
	}
	if _, err := Plan(Options{Host: "cursor", HubPath: "/h", Addr: "a", TokenFile: "t"}); err == nil || !strings.Contains(err.Error(), "claude, gemini, codex") {
		t.Errorf("unknown host: %v", err)
	}
}

func TestDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\n"
	new := "a\nb\nC\nd\ne\nf\ng\nh\ni\n"
	got := diff("f", old, new)
	want := "--- f\n+++ f (after hub setup)\n a\n b\n-c\n+C\n d\n e\n…\n g\n h\n+i\n"
	if got != want {
		t.Errorf("diff =\n%s\nwant\n%s", got, want)
	}
	if diff("f", old, old) != "" {
		t.Errorf("diff of equal texts is not empty")
	}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSetupFollowsTheHostsConfigDirs: the user's config goes where the
// host reads it when its own variable moves it (CLAUDE_CONFIG_DIR,
// CODEX_HOME, GEMINI_CLI_HOME); a project's files stay in the project.
func TestSetupFollowsTheHostsConfigDirs(t *testing.T) {
	for _, c := range []struct {
		host string
		want []string // under the config dir
	}{
		{"claude", []string{".claude.json", "settings.json"}},
		{"codex", []string{"config.toml", "hooks.json"}},
		{"gemini", []string{".gemini/settings.json"}},
	} {
		t.Run(c.host, func(t *testing.T) {
			home, dir := t.TempDir(), t.TempDir()
			o := Options{Host: c.host, Home: home, ConfigDir: dir, HubPath: "/opt/hub/bin/hub", Addr: "127.0.0.1:7700", TokenFile: "/t/dev.token"}
			changes, err := Plan(o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ch := range changes {
				rel, err := filepath.Rel(dir, ch.Path)
				if err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s is not under %s=%s", ch.Path, ConfigDirVar(c.host), dir)
					continue
				}
				got = append(got, rel)
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("files = %q, want %q under the config dir", got, c.want)
			}
			// A project's files are the project's, whatever the variable
			// says; Codex keeps the trust of its hooks in the user's config.
			o.Project = t.TempDir()
			changes, err = Plan(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range changes {
				if !strings.HasPrefix(ch.Path, o.Project) && (c.host != "codex" || ch.Path != filepath.Join(dir, "config.toml")) {
					t.Errorf("with --project, %s is outside the project", ch.Path)
				}
			}
		})
	}
}

// TestSetupSaysWhatTheHostSkips: for hosts that skip hooks silently until a
// person acts (Codex's hook review, Gemini's folder trust), setup says so.
func TestSetupSaysWhatTheHostSkips(t *testing.T) {
	for _, c := range []struct {
		host, project string
		want          []string
	}{
		{"codex", "/home/dev/app", []string{"/home/dev/app/.codex only in a trusted project"}},
		{"gemini", "/home/dev/app", []string{"untrusted folder", "trust /home/dev/app"}},
		{"gemini", "", []string{"each folder the agent works in"}},
	} {
		got := strings.Join(Steps(Options{Host: c.host, Project: c.project}), "\n")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %q: steps %q lack %q", c.host, c.project, got, w)
			}
		}
	}
	for _, host := range []string{"claude", "codex"} {
		if s := Steps(Options{Host: host}); len(s) != 0 {
			t.Errorf("%s steps = %q, want none (the host runs the hooks setup wrote)", host, s)
		}
	}
}

// With hub-hook beside the hub, every hook runs it (the MCP server and the
// telemetry's headers stay the hub's), and it takes the place of the hooks
// an earlier setup wrote with the hub itself, none doubled; a setup back
// without it returns them to the hub.
func TestSetupHooksRunHubHook(t *testing.T) {
	for _, host := range []string{"claude", "codex", "gemini"} {
		t.Run(host, func(t *testing.T) {
			dir := t.TempDir()
			o := Options{Host: host, Project: dir, Home: t.TempDir(), HubPath: "/opt/hub/bin/hub", Addr: "127.0.0.1:7700", TokenFile: "/t/dev.token"}
			path := filepath.Join(dir, "."+host, "settings.json")
			if host == "codex" {
				path = filepath.Join(dir, ".codex", "hooks.json")
			}
			events := []string{"SessionStart", "Stop", "PostToolUse"}
			if host == "gemini" {
				events = []string{"SessionStart", "AfterAgent", "AfterTool"}
			}
			apply(t, o)
			o.HookPath = "/opt/hub/bin/hub-hook"
			apply(t, o)
			settings := readJSON(t, path)
			for _, e := range events {
				want := "/opt/hub/bin/hub-hook hook " + host + " " + e + " --addr 127.0.0.1:7700 --token-file /t/dev.token"
				if c := hookCommands(settings, e); len(c) != 1 || c[0] != want {
					t.Errorf("%s hooks = %q, want [%q]", e, c, want)
				}
			}
			if host != "codex" {
				if s := settings["mcpServers"]; s != nil && s.(map[string]any)["hub"].(map[string]any)["command"] != o.HubPath {
					t.Errorf("the MCP server runs %v, want the hub %s", s.(map[string]any)["hub"], o.HubPath)
				}
			}
			checkIdempotent(t, o)
			o.HookPath = ""
			apply(t, o)
			if c := hookCommands(readJSON(t, path), events[1]); len(c) != 1 || !strings.HasPrefix(c[0], "/opt/hub/bin/hub hook ") {
				t.Errorf("after a setup without hub-hook, %s hooks = %q, want the hub's one", events[1], c)
			}
		})
	}
}
