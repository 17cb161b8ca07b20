// Command hub runs the Agent Hub server (`hub`, `hub serve`), the MCP
// stdio bridge for one agent (`hub mcp`) and the tmux sidecar that pastes
// an agent's messages into its pane (`hub deliver`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/gcfloor"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/termtext"
	"github.com/agenthub/hub/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// What the hub prints goes through the sanitizer: text from agents
	// (a reservation's reason in the guard, a body in a log) cannot drive
	// the terminal. hub mcp speaks JSON-RPC on stdout by itself.
	stdout, stderr := termtext.NewWriter(os.Stdout), termtext.NewWriter(os.Stderr)
	err := run(ctx, os.Args[1:], stdout, stderr)
	stop()
	code := 0
	switch {
	case errors.Is(err, errCommitRefused):
		code = 1 // the guard said why
	case err != nil && !errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, "hub:", err)
		code = 1
	}
	stdout.Flush()
	stderr.Flush()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stdout, stderr)
	case "mcp":
		return runMCP(ctx, args, stderr)
	case "deliver":
		return runDeliver(ctx, args, stderr)
	case "hook":
		return runHook(ctx, args, os.Stdin, stdout, stderr)
	case "setup":
		return runSetup(ctx, args, stdout, stderr)
	case "doctor":
		return runDoctor(args, stdout, stderr)
	case "guard":
		return runGuard(ctx, args, stdout, stderr)
	case "otel-headers":
		return runOtelHeaders(args, stdout, stderr)
	case "copy-store":
		return copyStore(ctx, args, stderr)
	case "health":
		return runHealth(ctx, args, stdout, stderr)
	case "bench-seed": // hubbench's tick scenario; not in the usage
		return runBenchSeed(ctx, args, stdout, stderr)
	case "bench-floor": // hubbench's floor scenario; not in the usage
		return runBenchFloor(ctx, args, stderr)
	case "version":
		fmt.Fprint(stdout, version.Long("hub"))
		return nil
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

const usage = `Usage:
  hub [serve] [flags]   run the hub (gRPC 127.0.0.1:7700, HTTP 127.0.0.1:7701)
  hub mcp [flags]       MCP server over stdio for one agent (HUB_TOKEN): what an
                        agent host such as Claude Code or Gemini CLI starts
  hub deliver --tmux TARGET
                        paste an agent's pulses, nudges and messages into its
                        tmux pane when it is idle and runs the agent (never a
                        shell; HUB_TOKEN; hub deliver -h)
  hub hook HOST EVENT   what an agent host runs at its hook events: injects new
                        messages, holds a stop while direct mail is unread
  hub setup HOST        write the hub's MCP server, hooks and telemetry export
                        into the config of claude, gemini or codex (hub setup -h)
  hub doctor            report the hub's hooks an agent host would skip, and the
                        fix (hub doctor -h)
  hub otel-headers --token-file FILE
                        print the agent's header for a host's telemetry export
                        (what hub setup makes the host run)
  hub guard install     add a git pre-commit hook refusing commits over paths
                        other agents reserved exclusively (hub guard -h)
  hub copy-store --from DATA_DIR --to postgres://…
                        copy a SQLite hub into an empty PostgreSQL database
  hub health [--addr HOST:PORT]
                        exit 0 if the hub at that HTTP address is ready
                        (/readyz), else 1 saying why: for health checks
  hub version           print the version, commit, build date and Go version
  hub help              print this help
Run "hub serve -h", "hub mcp -h", "hub hook -h", "hub setup -h",
"hub copy-store -h" or "hub health -h" for the flags.
`

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if os.Getenv("GOGC") == "" {
		gcfloor.Start(gcfloor.Hub)
	}
	m := app.NewMain()
	fs := flag.NewFlagSet("hub serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprint(fs.Output(), "\nFlags of hub serve:\n")
		fs.PrintDefaults()
	}
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.StringVar(&m.DataDir, "data-dir", datadir.Default(), "data directory (SQLite file, admin token); env HUB_DATA_DIR")
	fs.StringVar(&m.DatabaseURL, "database-url", os.Getenv("HUB_DATABASE_URL"), "PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB) for several replicas on one database; empty: SQLite in --data-dir; env HUB_DATABASE_URL")
	fs.StringVar(&m.AdminTokenPath, "admin-token-file", os.Getenv("HUB_ADMIN_TOKEN_FILE"), "file holding the admin token (a regular file of at least 32 bytes); env HUB_ADMIN_TOKEN_FILE. Default: <data-dir>/admin.token, created at the first start")
	fs.BoolVar(&m.Init, "init", false, "start an empty hub in a data dir whose database is gone (otherwise refused)")
	fs.StringVar(&m.GRPCAddr, "grpc-addr", m.GRPCAddr, "gRPC listen address")
	fs.StringVar(&m.HTTPAddr, "http-addr", m.HTTPAddr, `HTTP listen address (REST, OpenAPI, MCP at /mcp, /healthz); "off" disables`)
	fs.StringVar(&m.TLSCert, "tls-cert", "", "TLS certificate file (PEM) for gRPC and HTTP, in place of the hub's own CA")
	fs.StringVar(&m.TLSKey, "tls-key", "", "TLS private key file (PEM)")
	fs.BoolVar(&m.Insecure, "insecure", false, "serve plain TCP on a non-loopback listen address (otherwise the hub serves TLS there, with its own CA unless --tls-cert and --tls-key are given)")
	fs.Func("tls-hosts", "comma-separated names and addresses agents reach the hub at, put in the certificate of the hub's own CA besides the listen addresses (a DNS name, a NAT address)", func(v string) error {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				m.TLSHosts = append(m.TLSHosts, h)
			}
		}
		return nil
	})
	fs.Int64Var(&m.MaxDBSize, "max-db-size", 0, "cap on the database file in bytes (0: none); past it writes are refused as on a full disk")
	fs.StringVar(&m.Synchronous, "synchronous", m.Synchronous, "SQLite synchronous: NORMAL survives a process crash, FULL also survives power loss")
	tz := fs.String("time-zone", "", "hub time zone for heartbeat IDs and cron (IANA name; default the process's local zone)")
	locale := fs.String("locale", "en", "default message language: en or ja")
	fs.IntVar(&m.Config.MaxBodyBytes, "max-body", m.Config.MaxBodyBytes, "message body limit in bytes (at most 1 MiB)")
	fs.IntVar(&m.Config.MaxMentions, "max-mentions", m.Config.MaxMentions, "most distinct @names one message may mention")
	fs.IntVar(&m.Config.MaxFanout, "max-fanout", m.Config.MaxFanout, "most recipients one message may reach")
	fs.IntVar(&m.Config.WaitLimits.Total, "max-waiters", m.Config.WaitLimits.Total, "most parked WaitForMessages calls in total")
	fs.IntVar(&m.Config.WaitLimits.PerAgent, "max-waiters-per-agent", m.Config.WaitLimits.PerAgent, "most parked WaitForMessages calls per agent")
	fs.Float64Var(&m.RateLimit.PerSecond, "rate-limit", m.RateLimit.PerSecond, "writes per second each agent may sustain (heartbeats, posts, logs, …); 0 turns the limit off")
	fs.IntVar(&m.RateLimit.Burst, "rate-burst", m.RateLimit.Burst, "writes an agent may make at once after a pause (token bucket size)")
	fs.Float64Var(&m.ReadLimit.PerSecond, "read-rate-limit", m.ReadLimit.PerSecond, "reads per second each agent may sustain (status, lists, waits); 0 turns the limit off")
	fs.IntVar(&m.ReadLimit.Burst, "read-rate-burst", m.ReadLimit.Burst, "reads an agent may make at once after a pause")
	fs.Float64Var(&m.JoinRateLimit.PerSecond, "join-rate-limit", m.JoinRateLimit.PerSecond, "registrations (joins with a usable code: hub mcp --join, JoinHub) per second the whole hub admits; 0 turns the limit off")
	fs.IntVar(&m.JoinRateLimit.Burst, "join-rate-burst", m.JoinRateLimit.Burst, "registrations the hub admits at once after a pause")
	fs.Float64Var(&m.JoinSourceLimit.PerSecond, "join-source-rate-limit", m.JoinSourceLimit.PerSecond, "join attempts per second one source address may make, taken before the hub-wide budget; 0 turns the limit off")
	fs.IntVar(&m.JoinSourceLimit.Burst, "join-source-rate-burst", m.JoinSourceLimit.Burst, "join attempts one source address may make at once after a pause")
	fs.Float64Var(&m.JoinCodeLimit.PerSecond, "join-code-rate-limit", m.JoinCodeLimit.PerSecond, "join attempts per second with one join code; 0 turns the limit off")
	fs.IntVar(&m.JoinCodeLimit.Burst, "join-code-rate-burst", m.JoinCodeLimit.Burst, "join attempts with one join code at once after a pause")
	fs.Float64Var(&m.SearchLimit.PerSecond, "search-rate-limit", m.SearchLimit.PerSecond, "searches per second each agent may sustain; 0 turns the limit off")
	fs.IntVar(&m.SearchLimit.Burst, "search-rate-burst", m.SearchLimit.Burst, "searches an agent may make at once after a pause")
	fs.IntVar(&m.SearchSlots, "search-slots", 2, "searches the whole hub runs at once (one per caller); the others wait up to 2 s for a slot")
	fs.Func("http-allowed-hosts", `comma-separated Host names the HTTP port answers besides loopback names ("*.example.com" for subdomains); a page on any other name is refused (DNS rebinding)`, func(v string) error {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				m.HTTPAllowedHosts = append(m.HTTPAllowedHosts, h)
			}
		}
		return nil
	})
	fs.StringVar(&m.MetricsToken, "metrics-token", os.Getenv("HUB_METRICS_TOKEN"), "bearer token /metrics asks for (empty: /metrics is open on the HTTP port); env HUB_METRICS_TOKEN")
	fs.IntVar(&m.ConnLimits.Total, "max-conns", m.ConnLimits.Total, "most network connections held (gRPC and HTTP); kept below the file-descriptor limit. Past it, the oldest connection of the busiest source address is closed")
	fs.IntVar(&m.ConnLimits.PerSource, "max-conns-per-source", m.ConnLimits.PerSource, "most connections from one source IP address; past it, that address's oldest connection is closed")
	fs.DurationVar(&m.Config.PollInterval, "poll-interval", m.Config.PollInterval, "fallback poll for writes made outside this process")
	waitMode := fs.String("wait-mode", "notify", `"notify" (wake a wait as soon as a message is posted) or "poll" (check the store every --poll-interval; for benchmarks only)`)
	fs.DurationVar(&m.TickInterval, "tick-interval", m.TickInterval, "orchestrator tick")
	fs.DurationVar(&m.BeatInterval, "beat-interval", m.BeatInterval, "one beat every this long")
	fs.DurationVar(&m.InactivityTimeout, "inactivity-timeout", m.InactivityTimeout, "nudge an agent inactive this long")
	fs.DurationVar(&m.MentionAge, "mention-age", 0, "nudge an agent about unread mentions older than this (default: --inactivity-timeout)")
	fs.DurationVar(&m.NudgeMaxBackoff, "nudge-max-backoff", 0, "longest wait between two nudges of one inactivity episode (default 4h)")
	fs.DurationVar(&m.AckOverdue, "ack-overdue", 0, "nudge a recipient that has not acknowledged a message asking for it this long after the post (default 10m)")
	fs.DurationVar(&m.RetireAfter, "retire-after", m.RetireAfter, "retire an agent that has made no call for this long and holds no reservation: left out of its peers' lists until it calls again (0: never)")
	fs.DurationVar(&m.QueuedNoticeAfter, "queued-notice-after", m.QueuedNoticeAfter, "tell the sender of an urgent or ack_required message still queued for a recipient this long after the post, naming them and why (0: never)")
	fs.IntVar(&m.NoticeCap, "notice-cap", m.NoticeCap, "most nudges and notices one agent gets per clock hour (0: no cap)")
	fs.DurationVar(&m.ReservationReleaseAfter, "release-reservations-after", 0, "release the path reservations of an agent disabled, or silent (no call, no parked wait) this long (default 1h)")
	fs.DurationVar(&m.Config.TaskLease, "task-lease", hub.DefaultTaskLease, "how long a task claim lasts past its holder's last activity log, checkpoint or heartbeat before the task returns to open (a project may set its own: hubctl tasks lease)")
	fs.DurationVar(&m.Config.Health.IdleAfter, "idle-after", m.Config.Health.IdleAfter, "presence idle after no call for this long")
	fs.DurationVar(&m.Config.Health.OfflineAfter, "offline-after", m.Config.Health.OfflineAfter, "presence offline after no call for this long")
	fs.DurationVar(&m.Config.Health.InactivityWarning, "inactivity-warning", m.Config.Health.InactivityWarning, "health warning after this long without an activity log or checkpoint")
	fs.DurationVar(&m.Config.Health.InactivityAnomaly, "inactivity-anomaly", m.Config.Health.InactivityAnomaly, "health anomaly after this long without an activity log or checkpoint")
	fs.DurationVar(&m.Config.Health.ReflectionInterval, "reflection-interval", m.Config.Health.ReflectionInterval, "reflection overdue after this long without a reflection log")
	fs.DurationVar(&m.Config.Health.CheckpointInterval, "checkpoint-interval", m.Config.Health.CheckpointInterval, "checkpoint missing after this long in flexible deep work")
	fs.DurationVar(&m.Config.MaxDeepWork, "max-deep-work", m.Config.MaxDeepWork, "longest strict deep work")
	fs.Func("retain-messages", `delete messages older than this, e.g. "30d" or "12h" (default 0: keep every message); the orchestrator deletes them in small batches`, func(v string) error {
		d, err := hub.ParseRetention(v)
		m.RetainMessages = d
		return err
	})
	fs.Func("retain-usage-minutes", `keep what agents spent per minute this long, e.g. "7d" (default 7d; 0: for ever); older reports read the days`, func(v string) error {
		d, err := hub.ParseRetention(v)
		m.Config.UsageRetention.Minutes = d
		return err
	})
	fs.Func("retain-usage-days", `keep what agents spent per day this long, e.g. "400d" (default 400d; 0: for ever)`, func(v string) error {
		d, err := hub.ParseRetention(v)
		m.Config.UsageRetention.Days = d
		return err
	})
	memLimit := memoryLimit{auto: true}
	fs.Var(&memLimit, "memory-limit", memoryLimitUsage)
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	pprofAddr := fs.String("pprof-addr", "", "serve Go's profiles of the hub (CPU, heap, goroutines: go tool pprof http://ADDR/debug/pprof/profile) on this loopback address; empty: not served")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *showVersion {
		fmt.Fprint(stdout, version.Long("hub"))
		return nil
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: hub serve takes flags only", fs.Args())
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: use debug, info, warn or error", *logLevel)
	}
	m.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	applyMemoryLimit(memLimit, m.Logger)
	if *pprofAddr != "" {
		if _, err := serveProfiles(ctx, *pprofAddr, m.Logger); err != nil {
			return err
		}
	}
	if *tz != "" {
		loc, err := time.LoadLocation(*tz)
		if err != nil {
			return fmt.Errorf("--time-zone %q: %w (use an IANA name such as Asia/Tokyo or UTC)", *tz, err)
		}
		m.Config.Location = loc
	}
	l, err := hub.ParseLocale(*locale)
	if err != nil {
		return fmt.Errorf("--locale: %w", err)
	}
	m.Config.Locale = l
	switch *waitMode {
	case "notify":
	case "poll":
		m.Config.PollOnly = true
	default:
		return fmt.Errorf(`--wait-mode %q: use "notify" or "poll"`, *waitMode)
	}
	return m.Run(ctx)
}
