package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/setup"
)

const setupUsage = `Usage: hub setup claude|gemini|codex [flags]

Writes the hub into the host's own config files, merged with what is there
(other MCP servers and hooks are kept; an earlier hub entry is replaced), each
changed file first copied to FILE.bak-TIMESTAMP:
  claude  --project DIR: DIR/.mcp.json, DIR/.claude/settings.json
          otherwise:     ~/.claude.json, ~/.claude/settings.json
  gemini  DIR/.gemini/settings.json, or ~/.gemini/settings.json
  codex   DIR/.codex/config.toml and hooks.json, or the same under ~/.codex
The user's files follow the host's own variable: CLAUDE_CONFIG_DIR (its
.claude.json and settings.json), CODEX_HOME (for ~/.codex), GEMINI_CLI_HOME
(for the home that holds .gemini).
The MCP server runs "hub mcp" and the hooks run "hub hook"; both read the
agent's token from a token file (mode 0600, default
<user config dir>/agent-hub/NAME.token), never from the config files.
The host's own telemetry (tokens, cost, tool results) is exported to the
hub's OTLP receiver (--otlp), the agent's header from "hub otel-headers"
(Claude Code: the user's settings only; Gemini CLI: from its environment).

The agent: --token (or env HUB_TOKEN) for an agent that exists, --name to
create it with the admin token (--admin-token-file, default the admin.token of
the hub's data dir, as hubctl finds it), or --join CODE --name NAME to register
it with a join code (from hubctl join-codes create).

On another machine, run the "hub setup" line hubctl join-codes create prints,
adding --name: --ca-fingerprint fetches the hub's CA over TLS, refuses it
unless its fingerprint is the one given, and keeps it in <user config
dir>/agent-hub/ca for that address; hub mcp, hub hook and hubctl then talk
TLS to that hub with that CA.

Flags:
`

// setupTimeout bounds setup's calls to the hub.
const setupTimeout = 10 * time.Second

// runSetup runs `hub setup HOST`.
func runSetup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	host := "" // the first argument; -h before it still shows the flags
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		host, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("hub setup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), setupUsage)
		fs.PrintDefaults()
	}
	project := fs.String("project", "", "write the project's config files in DIR (default: the user's)")
	addr := fs.String("addr", mcpEnvOr("HUB_ADDR", "127.0.0.1:7700"), "the hub's gRPC address; env HUB_ADDR")
	var src agentSource
	fs.StringVar(&src.token, "token", "", "the agent's token; env HUB_TOKEN")
	fs.StringVar(&src.adminTokenFile, "admin-token-file", "", "create the agent with the admin token in this file (default with --name: the hub data dir's admin.token)")
	fs.StringVar(&src.name, "name", "", "create this agent (with the admin token, or with --join)")
	fs.StringVar(&src.join, "join", "", "register the agent --name with this join code")
	fs.StringVar(&src.role, "role", "", "the role of the agent created with --admin-token-file")
	tokenFile := fs.String("token-file", "", "where the agent's token is kept (mode 0600; default <user config dir>/agent-hub/NAME.token)")
	hubPath := fs.String("hub", "", "the hub binary the host runs (default: this one)")
	dryRun := fs.Bool("dry-run", false, "print the changes (a diff per file) and write nothing")
	caFingerprint := fs.String("ca-fingerprint", "", "the fingerprint of the hub's own CA (sha256:…, in the line hubctl join-codes create prints): fetch the CA over TLS, check it and keep it for --addr, so that hub mcp and hub hook talk TLS to that hub")
	otlp := fs.String("otlp", "", `the hub's OTLP/HTTP endpoint the host exports its telemetry to (tokens, cost, tool results; docs/usage.md): default http://HOST:PORT/otlp for a hub on loopback, HOST of --addr and PORT one above its port (the hub's default listeners); "off": no telemetry settings`)
	approvalWait := fs.Duration("approval-wait", hooklocal.DefaultApprovalWait, "claude, codex: how long a permission request waits for a person in the hub's inbox before the host asks in the terminal (0: do not relay); the host's hook time-out is set above it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if host == "" {
		fs.Usage()
		return fmt.Errorf("hub setup needs a host: %s", strings.Join(setup.Hosts, ", "))
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: hub setup takes one host and flags", fs.Args())
	}
	if src.name != "" && src.token == "" && src.join == "" {
		// --name creates the agent, with the admin token of the hub's data dir by default.
		if src.adminTokenFile == "" {
			src.adminTokenFile = datadir.AdminTokenFile(datadir.Default())
		}
	} else if src.token == "" {
		src.token = os.Getenv("HUB_TOKEN")
	}
	if *approvalWait < 0 || *approvalWait > 10*time.Minute {
		return fmt.Errorf("--approval-wait %v is out of range: give 0 (do not relay) to 10m", *approvalWait)
	}
	o := setup.Options{Host: host, Addr: *addr, ApprovalWait: *approvalWait, ConfigDir: os.Getenv(setup.ConfigDirVar(host))}
	var err error
	if o.OTLP, err = otlpEndpoint(*otlp, *addr); err != nil {
		return err
	}
	if o.Home, err = os.UserHomeDir(); err != nil {
		return fmt.Errorf("find the home directory: %w", err)
	}
	if *project != "" {
		if o.Project, err = filepath.Abs(*project); err != nil {
			return err
		}
		if st, err := os.Stat(o.Project); err != nil || !st.IsDir() {
			return fmt.Errorf("--project %s is not a directory", *project)
		}
	}
	if o.HubPath = *hubPath; o.HubPath == "" {
		if o.HubPath, err = os.Executable(); err == nil {
			o.HubPath, err = filepath.EvalSymlinks(o.HubPath)
		}
		if err != nil {
			return fmt.Errorf("find the hub binary: %w (give --hub PATH)", err)
		}
	}
	if o.HubPath, err = filepath.Abs(o.HubPath); err != nil {
		return err
	}
	o.HookPath = hookBinary(o.HubPath)

	if *caFingerprint != "" {
		if err := pinCA(ctx, *addr, *caFingerprint, *dryRun, stdout); err != nil {
			return err
		}
	}
	src.tokenFile = *tokenFile
	name, token, err := src.obtain(ctx, *addr, *dryRun)
	if err != nil {
		return err
	}
	if o.TokenFile = src.tokenFile; o.TokenFile == "" {
		if o.TokenFile, err = mcpbridge.DefaultTokenFile(name); err != nil {
			return err
		}
	}
	if o.TokenFile, err = filepath.Abs(o.TokenFile); err != nil {
		return err
	}
	changes, err := setup.Plan(o)
	if err != nil {
		return err
	}
	if token != "" {
		tc, err := setup.TokenFileChange(o.TokenFile, token)
		if err != nil {
			return err
		}
		changes = append([]setup.Change{tc}, changes...)
	}
	if *dryRun {
		fmt.Fprint(stdout, setup.Describe(changes))
		if token == "" {
			fmt.Fprintf(stdout, "%s: the token of the agent %s, created when run without --dry-run (mode 0600)\n", o.TokenFile, name)
		}
		return nil
	}
	backups, err := setup.Apply(changes, time.Now())
	for _, b := range backups {
		fmt.Fprintf(stdout, "kept a backup: %s\n", b)
	}
	if err != nil {
		return err
	}
	for _, c := range changes {
		state := "written"
		if !c.Changed() {
			state = "unchanged"
		}
		if c.Target != c.Path {
			state += " (the link's target, " + c.Target + ")"
		}
		fmt.Fprintf(stdout, "%s: %s\n", c.Path, state)
	}
	fmt.Fprintf(stdout, "%s is set up for agent %s of the hub at %s; start a new session to load it.\n", host, name, *addr)
	for _, step := range setup.Steps(o) {
		fmt.Fprintf(stdout, "To do: %s\n", step)
	}
	return nil
}

// otlpEndpoint is the OTLP endpoint setup writes: flag as given ("off":
// none), else derived from the hub's gRPC address when it is on loopback
// (the HTTP listener one port above it, plain HTTP), else none.
func otlpEndpoint(flag, addr string) (string, error) {
	switch flag {
	case "off":
		return "", nil
	case "":
		host, port, err := net.SplitHostPort(addr)
		p, perr := strconv.Atoi(port)
		if err != nil || perr != nil || !isLoopback(host) {
			return "", nil
		}
		return "http://" + net.JoinHostPort(host, strconv.Itoa(p+1)) + "/otlp", nil
	}
	u, err := url.Parse(flag)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--otlp %q: give the hub's OTLP endpoint as http://HOST:PORT/otlp (its HTTP listener), or off", flag)
	}
	return strings.TrimSuffix(flag, "/"), nil
}

// isLoopback reports whether host names this machine's loopback.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// agentSource is where setup gets the agent: its token, an admin token to
// create it, or a join code to register it.
type agentSource struct {
	token          string
	adminTokenFile string
	join           string // a join code
	name, role     string
	tokenFile      string // where the token is kept ("" for the default)
}

// obtain returns the agent's name and token. A token is checked with the
// hub, which names its agent; an admin token creates the agent and a join
// code registers it (neither in a
// dry run, where the token is "").
func (s *agentSource) obtain(ctx context.Context, addr string, dryRun bool) (name, token string, err error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	switch {
	case s.token != "" && (s.adminTokenFile != "" || s.name != "" || s.join != ""):
		return "", "", fmt.Errorf("give either --token for an agent that exists or --name to create one, not both")
	case s.join != "":
		if s.name == "" {
			return "", "", fmt.Errorf("--join registers a new agent: give its --name")
		}
		if dryRun {
			return s.name, "", nil
		}
		if s.tokenFile == "" {
			if s.tokenFile, err = mcpbridge.DefaultTokenFile(s.name); err != nil {
				return "", "", err
			}
		}
		// JoinOnce keeps the token in the token file itself, before it
		// registers, so that a token is never issued that cannot be kept.
		token, _, err := mcpbridge.JoinOnce(ctx, hub.SystemClock{}, addr, s.join, s.name, s.tokenFile)
		if err != nil {
			return "", "", fmt.Errorf("register agent %s with the join code at the hub at %s: %w", s.name, addr, err)
		}
		return s.name, token, nil
	case s.token != "":
		conn, err := mcpbridge.Dial(addr, s.token)
		if err != nil {
			return "", "", err
		}
		defer conn.Close()
		r, err := hubv1.NewAgentServiceClient(conn).GetStatus(ctx, &hubv1.GetStatusRequest{})
		if err != nil {
			return "", "", fmt.Errorf("check the agent token with the hub at %s: %w", addr, err)
		}
		return r.GetStatus().GetAgent(), s.token, nil
	case s.adminTokenFile != "":
		if s.name == "" {
			return "", "", fmt.Errorf("--admin-token-file creates an agent: give its --name")
		}
		if dryRun {
			return s.name, "", nil
		}
		b, err := os.ReadFile(s.adminTokenFile)
		if err != nil {
			return "", "", fmt.Errorf("read --admin-token-file: %w", err)
		}
		conn, err := mcpbridge.Dial(addr, strings.TrimSpace(string(b)))
		if err != nil {
			return "", "", err
		}
		defer conn.Close()
		r, err := hubv1.NewAdminServiceClient(conn).CreateAgent(ctx, &hubv1.CreateAgentRequest{Name: s.name, Role: s.role})
		if err != nil {
			return "", "", fmt.Errorf("create agent %s at the hub at %s: %w", s.name, addr, err)
		}
		return r.GetAgent().GetName(), r.GetToken(), nil
	}
	return "", "", fmt.Errorf("no agent: give --token (or env HUB_TOKEN), or --name to create one with the admin token")
}

// hookBinary returns hub-hook beside the hub binary hubPath, which the
// hosts' hooks and the guard then run (it starts in a few milliseconds),
// or "" when it is not there (they run the hub itself).
func hookBinary(hubPath string) string {
	p, err := hooklocal.Sibling(hubPath, "hub-hook")
	if err != nil {
		return ""
	}
	return p
}
