// Package setup writes the hub into an agent host's own configuration
// (`hub setup claude|gemini|codex`): the MCP server entry that runs `hub
// mcp`, and the hooks that run `hub hook`, merged into the files the host
// reads. Everything else in those files is kept (other servers, other
// hooks, unknown keys, key order); an earlier hub entry is replaced, so a
// second run changes nothing. Plan computes the changes, Apply writes them,
// each changed file first copied to a backup beside it.
//
// The agent's token is never written into a host's config: the configs
// name a token file (0600, the user's only) with --token-file, because
// settings files are commonly world-readable and project ones are
// committed, while a token file can be rotated by rewriting one file.
//
// Where each host reads its configuration:
//   - Claude Code (https://code.claude.com/docs/en/mcp,
//     https://code.claude.com/docs/en/settings): project DIR/.mcp.json
//     ("mcpServers", approved in DIR/.claude/settings.json
//     "enabledMcpjsonServers") and DIR/.claude/settings.json ("hooks"); user
//     ~/.claude.json ("mcpServers") and ~/.claude/settings.json ("hooks").
//   - Gemini CLI (https://geminicli.com/docs/reference/configuration,
//     https://geminicli.com/docs/hooks/reference): DIR/.gemini/settings.json
//     or ~/.gemini/settings.json, "mcpServers" and "hooks" (hook time-outs
//     in milliseconds).
//   - Codex (https://developers.openai.com/codex/mcp,
//     https://developers.openai.com/codex/hooks): DIR/.codex/config.toml or
//     ~/.codex/config.toml ([mcp_servers.hub]), hooks.json beside it.
package setup

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// ServerName is the name of the hub's MCP server entry in every host (and
// so the NAME of `--dangerously-load-development-channels server:NAME`).
const ServerName = "hub"

// Hosts are the hosts setup knows, in the order help lists them.
var Hosts = []string{"claude", "gemini", "codex"}

// Options say what to set up.
type Options struct {
	Host    string // claude, gemini or codex
	Project string // the project directory; "" writes the user's config under Home
	Home    string // the user's home directory
	// ConfigDir is the host's own override of where it keeps the user's
	// config, from its environment (ConfigDirVar); "" for the default.
	// A project's files stay in the project.
	ConfigDir string
	HubPath   string // absolute path of the hub binary the host runs
	// HookPath is the absolute path of the binary the host's hooks run:
	// hub-hook beside the hub binary (it starts in a few milliseconds,
	// and the host runs a hook at every tool call), "" for the hub itself.
	HookPath string
	// Addr is the hub's gRPC address; TokenFile the agent's token file.
	Addr      string
	TokenFile string
	// ApprovalWait is how long a permission request waits for a person
	// (its hook's --approval-wait; the host's time-out is set above it).
	ApprovalWait time.Duration
	// OTLP is the hub's OTLP/HTTP endpoint (http://HOST:PORT/otlp) the
	// host exports its telemetry to; "" writes no telemetry settings.
	OTLP string
}

// ConfigDirVar is the environment variable with which host moves the
// user's config away from its default place: Claude Code's
// CLAUDE_CONFIG_DIR (~/.claude.json and ~/.claude/settings.json become
// DIR/.claude.json and DIR/settings.json), Codex's CODEX_HOME (for
// ~/.codex) and Gemini CLI's GEMINI_CLI_HOME (for the home directory that
// holds .gemini).
func ConfigDirVar(host string) string {
	switch host {
	case "claude":
		return "CLAUDE_CONFIG_DIR"
	case "codex":
		return "CODEX_HOME"
	case "gemini":
		return "GEMINI_CLI_HOME"
	}
	return ""
}

// Change is one file to write.
type Change struct {
	Path string
	// Target is where the content is written: Path, or the file a
	// symbolic link at Path (or on its way) leads to, edited in place.
	Target  string
	Old     []byte // the file as it is (nil when it does not exist)
	New     []byte
	Mode    os.FileMode // for a new file
	Existed bool
	Secret  bool // a token file: never shown
}

// Changed reports whether writing c changes the file.
func (c Change) Changed() bool { return !c.Existed || string(c.Old) != string(c.New) }

// hookEvents are the events each host's hooks are written for.
var hookEvents = map[string][]string{
	"claude": {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "PermissionRequest", "Notification", "SessionEnd"},
	"codex":  {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PermissionRequest", "SessionEnd"},
	"gemini": {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"},
}

// Plan returns the changes that set the hub up in o.Host's configuration,
// reading the files as they are and writing nothing.
func Plan(o Options) ([]Change, error) {
	if !slices.Contains(Hosts, o.Host) {
		return nil, fmt.Errorf("unknown host %q: use %s", o.Host, strings.Join(Hosts, ", "))
	}
	if o.HubPath == "" || o.Addr == "" || o.TokenFile == "" {
		return nil, fmt.Errorf("setup needs the hub binary, the hub address and the token file")
	}
	base := o.Home
	if o.Project != "" {
		base = o.Project
	}
	var out []Change
	edit := func(path string, mode os.FileMode, fn func(*object) error) error {
		c, err := editJSON(path, o.Project, mode, fn)
		if err != nil {
			return err
		}
		out = append(out, c)
		return nil
	}
	server := o.serverEntry()
	switch o.Host {
	case "claude":
		mcpPath, mcpMode := filepath.Join(o.Home, ".claude.json"), os.FileMode(0o600)
		settings := filepath.Join(base, ".claude", "settings.json")
		switch {
		case o.Project != "":
			mcpPath, mcpMode = filepath.Join(o.Project, ".mcp.json"), 0o644
		case o.ConfigDir != "":
			mcpPath, settings = filepath.Join(o.ConfigDir, ".claude.json"), filepath.Join(o.ConfigDir, "settings.json")
		}
		if err := edit(mcpPath, mcpMode, func(root *object) error { return putServer(root, server) }); err != nil {
			return nil, err
		}
		err := edit(settings, 0o644, func(root *object) error {
			if o.Project != "" {
				approveServer(root)
			}
			if err := o.putClaudeTelemetry(root); err != nil {
				return err
			}
			return o.putHooks(root, 5)
		})
		if err != nil {
			return nil, err
		}
	case "gemini":
		if o.Project == "" && o.ConfigDir != "" {
			base = o.ConfigDir
		}
		err := edit(filepath.Join(base, ".gemini", "settings.json"), 0o644, func(root *object) error {
			if err := putServer(root, server); err != nil {
				return err
			}
			if err := o.putGeminiTelemetry(root); err != nil {
				return err
			}
			return o.putHooks(root, 5000)
		})
		if err != nil {
			return nil, err
		}
	case "codex":
		userDir := filepath.Join(o.Home, ".codex")
		if o.ConfigDir != "" {
			userDir = o.ConfigDir
		}
		dir := userDir
		if o.Project != "" {
			dir = filepath.Join(o.Project, ".codex")
		}
		hooks, err := editJSON(filepath.Join(dir, "hooks.json"), o.Project, 0o644, func(root *object) error { return o.putHooks(root, 5) })
		if err != nil {
			return nil, err
		}
		drop, trust, err := o.codexTrust(hooks)
		if err != nil {
			return nil, err
		}
		if o.Project == "" {
			c, err := editTOML(filepath.Join(dir, "config.toml"), "", drop, o.codexServer(), trust, o.codexTelemetry())
			if err != nil {
				return nil, err
			}
			out = append(out, c, hooks)
			break
		}
		c, err := editTOML(filepath.Join(dir, "config.toml"), o.Project, nil, o.codexServer(), o.codexTelemetry())
		if err != nil {
			return nil, err
		}
		// Codex keeps hook trust in the user's config only.
		u, err := editTOML(filepath.Join(userDir, "config.toml"), "", drop, trust)
		if err != nil {
			return nil, err
		}
		out = append(out, c, hooks, u)
	}
	return out, nil
}

// codexTrust returns the [hooks.state] tables that trust the hub's hooks
// as the change to hooks.json writes them, and the names of the tables of
// the hub's hooks the file had before (whose keys may differ), to drop.
func (o Options) codexTrust(hooks Change) (drop []string, trust string, err error) {
	ours := func(cmd string) bool { return isHubHook(cmd, o.HubPath, o.HookPath) }
	file := o.codexHooksFile()
	before, err := parseObject(hooks.Old)
	if err != nil {
		return nil, "", err
	}
	after, err := parseObject(hooks.New)
	if err != nil {
		return nil, "", err
	}
	for _, h := range findHubHooks(before, file, ours) {
		drop = append(drop, "hooks.state."+tomlString(h.Key))
	}
	return drop, codexTrustTables(findHubHooks(after, file, ours)), nil
}

// Steps says what the user must still do for the host to run what setup
// wrote, where the host skips it silently until a person acts.
func Steps(o Options) []string {
	switch o.Host {
	case "claude":
		if o.OTLP != "" && o.Project != "" {
			return []string{"Claude Code exports its telemetry (what the agent spends) only as the user's settings say, " +
				"never a project's: run hub setup claude without --project for the agent this user's sessions report as, " +
				"or see docs/usage.md."}
		}
	case "codex":
		// The hooks are trusted in the user's config (codexTrust).
		if o.Project != "" {
			return []string{"Codex reads " + filepath.Join(o.Project, ".codex") + " only in a trusted project: trust it when codex asks."}
		}
	case "gemini":
		dir := "each folder the agent works in"
		if o.Project != "" {
			dir = o.Project
		}
		steps := []string{"Gemini CLI skips every settings hook in an untrusted folder: trust " + dir +
			" when gemini asks at its first start there (kept in ~/.gemini/trustedFolders.json)."}
		if o.OTLP != "" {
			steps = append(steps, "Gemini CLI has no headers helper: start it with the agent's token in its environment, "+
				"read from the token file, for its telemetry to count: "+
				`OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer $(cat `+shellQuote(o.TokenFile)+`)" gemini`)
		}
		return steps
	}
	return nil
}

// serverEntry is the MCP server entry: hub mcp with the token file.
func (o Options) serverEntry() *object {
	s := newObject()
	if o.Host == "claude" {
		s.set("type", "stdio")
	}
	s.set("command", o.HubPath)
	s.set("args", []any{"mcp", "--token-file", o.TokenFile})
	env := newObject()
	env.set("HUB_ADDR", o.Addr)
	s.set("env", env)
	return s
}

// putServer sets mcpServers.hub, keeping every other server.
func putServer(root *object, server *object) error {
	servers, err := root.child("mcpServers")
	if err != nil {
		return err
	}
	servers.set(ServerName, server)
	return nil
}

// approveServer adds the hub to the project servers Claude Code runs
// without asking.
func approveServer(root *object) {
	list, _ := root.get("enabledMcpjsonServers").([]any)
	if slices.Contains(list, any(ServerName)) {
		return
	}
	root.set("enabledMcpjsonServers", append(list, ServerName))
}

// hookCommand is the shell command a host runs for event.
func (o Options) hookCommand(event string) string {
	bin := o.HookPath
	if bin == "" {
		bin = o.HubPath
	}
	cmd := fmt.Sprintf("%s hook %s %s --addr %s --token-file %s",
		shellQuote(bin), o.Host, event, shellQuote(o.Addr), shellQuote(o.TokenFile))
	if event == "PermissionRequest" {
		cmd += " --approval-wait " + o.ApprovalWait.String()
	}
	return cmd
}

// codexSessionEndTimeout is the time-out of Codex's SessionEnd hook, in
// seconds: Codex refuses a longer one there (it waits for the hook as it
// exits).
const codexSessionEndTimeout = 3

// approvalTimeout is a permission request hook's time-out in seconds: the
// wait for a person and ten seconds more, so that the host never cuts the
// hook before it gives up by itself.
func (o Options) approvalTimeout() int {
	return int(o.ApprovalWait/time.Second) + 10
}

// putHooks replaces the hub's hooks in root's "hooks" (timeout in the
// host's unit) and keeps every other hook. An earlier hub hook is
// replaced where it is, so that no other hook moves: Codex keys a hook's
// trust by its place in the list.
func (o Options) putHooks(root *object, timeout int) error {
	hooks, err := root.child("hooks")
	if err != nil {
		return err
	}
	for _, event := range hookEvents[o.Host] {
		groups, ok := hooks.get(event).([]any)
		if hooks.get(event) != nil && !ok {
			return fmt.Errorf("hooks.%s is not a list: fix it by hand first", event)
		}
		h := newObject()
		if o.Host == "gemini" {
			h.set("name", "agent-hub")
		}
		h.set("type", "command")
		h.set("command", o.hookCommand(event))
		t := timeout
		switch {
		case event == "PermissionRequest":
			t = o.approvalTimeout() // Claude Code and Codex: seconds
		case event == "SessionEnd" && o.Host == "codex":
			t = codexSessionEndTimeout
		}
		h.set("timeout", t)
		groups, placed := replaceHooks(groups, func(cmd string) bool { return isHubHook(cmd, o.HubPath, o.HookPath) }, h)
		if !placed {
			g := newObject()
			g.set("hooks", []any{h})
			groups = append(groups, g)
		}
		hooks.set(event, groups)
	}
	return nil
}

// replaceHooks puts h in place of the first hook whose command is ours
// (an earlier setup's `hub hook …`), removes the other such hooks and the
// groups they leave empty, and reports whether h was placed.
func replaceHooks(groups []any, ours func(cmd string) bool, h *object) ([]any, bool) {
	var out []any
	placed := false
	for _, g := range groups {
		gobj, ok := g.(*object)
		if !ok {
			out = append(out, g)
			continue
		}
		hs, ok := gobj.get("hooks").([]any)
		if !ok {
			out = append(out, g)
			continue
		}
		var kept []any
		changed := false
		for _, x := range hs {
			var cmd string
			if xo, ok := x.(*object); ok {
				cmd, _ = xo.get("command").(string)
			}
			switch {
			case !ours(cmd):
				kept = append(kept, x)
				continue
			case !placed:
				kept = append(kept, h)
				placed = true
			}
			changed = true
		}
		if len(kept) == 0 {
			continue
		}
		if changed {
			gobj.set("hooks", kept)
		}
		out = append(out, g)
	}
	return out, placed
}

// isHubHook reports whether a hook command runs `BINARY hook HOST …`
// with BINARY one of paths or any binary named hub or hub-hook.
func isHubHook(cmd string, paths ...string) bool {
	m := hubHookRE().FindStringSubmatch(cmd)
	if m == nil {
		return false
	}
	bin := strings.Trim(m[1], `'"`)
	name := strings.TrimSuffix(filepath.Base(bin), ".exe")
	return slices.Contains(paths, bin) || name == "hub" || name == "hub-hook"
}

// hubHookRE matches `BINARY hook HOST …`, BINARY maybe quoted; compiled at
// its first use, not at the start of every hub command.
var hubHookRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*('[^']*'|"[^"]*"|\S+)\s+hook\s+(?:claude|gemini|codex)(?:\s|$)`)
})

// editJSON reads the JSON object at path (none: empty), applies fn and
// returns the change. project is the project path must stay in ("": a
// user file; see locate).
func editJSON(path, project string, mode os.FileMode, fn func(*object) error) (Change, error) {
	c, err := read(path, project, mode)
	if err != nil {
		return c, err
	}
	root, err := parseObject(c.Old)
	if err != nil {
		return c, fmt.Errorf("%s: %w (setup merges into a JSON object: fix the file or move it away)", path, err)
	}
	if err := fn(root); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	c.New = marshal(root)
	return c, nil
}

// read loads the current content of the file path leads to (locate) into
// a Change.
func read(path, project string, mode os.FileMode) (Change, error) {
	c := Change{Path: path, Mode: mode}
	target, err := locate(path, project)
	if err != nil {
		return c, err
	}
	c.Target = target
	b, err := os.ReadFile(target)
	switch {
	case err == nil:
		c.Old, c.Existed = b, true
	case !os.IsNotExist(err):
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	return c, nil
}

// TokenFileChange is the change that writes the agent's token file (0600).
func TokenFileChange(path, token string) (Change, error) {
	c, err := read(path, "", 0o600)
	c.New, c.Secret = []byte(token+"\n"), true
	return c, err
}

// Apply writes the changes that change something: an existing file is
// first copied to a new PATH.bak-TIMESTAMP beside Path (with its mode,
// created exclusively), then its Target is replaced atomically (a
// temporary file renamed over it), keeping its mode; a symbolic link at
// Path stays. Directories are created 0700. It returns the backups it
// made.
func Apply(changes []Change, now time.Time) ([]string, error) {
	var backups []string
	for _, c := range changes {
		if !c.Changed() {
			continue
		}
		mode := c.Mode
		if st, err := os.Stat(c.Target); err == nil {
			mode = st.Mode().Perm()
			if c.Secret {
				mode = 0o600
			}
			bak, err := backup(c.Path, c.Old, mode, now)
			if err != nil {
				return backups, err
			}
			backups = append(backups, bak)
		}
		if err := writeAtomic(c.Target, c.New, mode); err != nil {
			return backups, err
		}
	}
	return backups, nil
}

func writeAtomic(path string, b []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // after the rename, a no-op
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Describe renders the changes for --dry-run: a diff per changed file
// (token files by name only).
func Describe(changes []Change) string {
	var sb strings.Builder
	for _, c := range changes {
		switch {
		case !c.Changed():
			fmt.Fprintf(&sb, "%s: unchanged\n", c.Path)
		case c.Secret:
			fmt.Fprintf(&sb, "%s: the agent's token (mode 0600)\n", c.Path)
		default:
			if c.Target != c.Path {
				fmt.Fprintf(&sb, "%s is a symbolic link: its target %s is edited, the link kept\n", c.Path, c.Target)
			}
			sb.WriteString(diff(c.Path, string(c.Old), string(c.New)))
		}
	}
	return sb.String()
}

// shellQuote quotes s for sh when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// otelHeadersCommand is the command a host runs for the headers of its
// telemetry export: `hub otel-headers` prints the agent's Authorization
// from the token file.
func (o Options) otelHeadersCommand() string {
	return fmt.Sprintf("%s otel-headers --token-file %s", shellQuote(o.HubPath), shellQuote(o.TokenFile))
}

// putClaudeTelemetry turns on Claude Code's OpenTelemetry export of
// metrics and log events to the hub (settings "env", OTLP/HTTP with
// protobuf), the agent's header from otelHeadersHelper. Claude Code takes
// its telemetry settings from the user's settings only, never a
// project's: with a project, nothing is written (Steps says so).
func (o Options) putClaudeTelemetry(root *object) error {
	if o.OTLP == "" || o.Project != "" {
		return nil
	}
	env, err := root.child("env")
	if err != nil {
		return err
	}
	env.set("CLAUDE_CODE_ENABLE_TELEMETRY", "1")
	env.set("OTEL_METRICS_EXPORTER", "otlp")
	env.set("OTEL_LOGS_EXPORTER", "otlp")
	env.set("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	env.set("OTEL_EXPORTER_OTLP_ENDPOINT", o.OTLP)
	root.set("otelHeadersHelper", o.otelHeadersCommand())
	return nil
}

// putGeminiTelemetry turns on Gemini CLI's OpenTelemetry export to the
// hub ("telemetry": target local, OTLP over HTTP). Gemini CLI has no
// headers helper: the agent's header comes from the environment it is
// started in (Steps says how).
func (o Options) putGeminiTelemetry(root *object) error {
	if o.OTLP == "" {
		return nil
	}
	tel, err := root.child("telemetry")
	if err != nil {
		return err
	}
	tel.set("enabled", true)
	tel.set("target", "local")
	tel.set("otlpEndpoint", o.OTLP)
	tel.set("otlpProtocol", "http")
	tel.set("logPrompts", false)
	return nil
}
