// Package app wires the hub together: store, domain, orchestrator, gRPC,
// REST and MCP-over-HTTP. cmd/hub parses flags into a Main and runs it;
// tests boot a Main on port 0 with a temporary data dir.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/gateway"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/inproc"
	"github.com/agenthub/hub/internal/loopback"
	"github.com/agenthub/hub/internal/metrics"
	"github.com/agenthub/hub/internal/orchestrator"
	"github.com/agenthub/hub/internal/server"
	"github.com/agenthub/hub/internal/tlsca"
	"github.com/agenthub/hub/internal/usage"
	"github.com/agenthub/hub/internal/version"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// restReplyMargin is the time a REST call keeps, after its deadline, to
// write its reply before the HTTP server's write timeout.
const restReplyMargin = 5 * time.Second

// Main is one hub process.
type Main struct {
	DataDir string
	// DatabaseURL, when set, puts the store in PostgreSQL (postgres://…)
	// instead of SQLite in DataDir, for several replicas on one database.
	DatabaseURL string
	GRPCAddr    string // default 127.0.0.1:7700
	HTTPAddr    string // default 127.0.0.1:7701; "" or "off" disables HTTP

	Config      hub.Config
	Synchronous string // SQLite synchronous: NORMAL (default) or FULL
	MaxDBSize   int64  // cap on the database file in bytes (--max-db-size; 0: none)

	TickInterval      time.Duration // orchestrator tick (5s)
	BeatInterval      time.Duration // beat period (5m)
	InactivityTimeout time.Duration // nudge after this (10m)
	MentionAge        time.Duration // nudge about unread mentions older than this (0: InactivityTimeout)
	NudgeMaxBackoff   time.Duration // longest wait between two nudges of one episode (0: 4h)
	RetainMessages    time.Duration // delete messages older than this (0: keep all)
	// ReservationReleaseAfter releases the path reservations of an agent
	// silent this long (0: 1h).
	ReservationReleaseAfter time.Duration
	// AckOverdue nudges a recipient that has not acknowledged a message
	// asking for it this long after the post (0: 10m).
	AckOverdue time.Duration
	// RetireAfter retires an agent silent this long that holds nothing
	// (--retire-after; 0 never).
	RetireAfter time.Duration
	// QueuedNoticeAfter tells the sender of an urgent or ack_required
	// message still queued for a recipient this long after the post
	// (--queued-notice-after; 0 never).
	QueuedNoticeAfter time.Duration
	// NoticeCap is how many nudges and notices an agent gets per hour at
	// most (--notice-cap; 0 no cap).
	NoticeCap      int
	NoOrchestrator bool // tests that drive Tick themselves

	// AdminTokenPath names a file holding the admin token
	// (--admin-token-file); "" means <data-dir>/admin.token, created at the
	// first start.
	AdminTokenPath string
	// Init starts an empty hub on purpose in a data dir whose database is
	// gone (--init); without it such a start is refused.
	Init bool

	TLSCert, TLSKey string
	Insecure        bool // allow a non-loopback address without TLS
	// TLSHosts are names and addresses the certificate of the hub's own CA
	// names besides the listen addresses (--tls-hosts): the ones agents
	// reach the hub by.
	TLSHosts []string

	// RateLimit is the per-agent budget of write calls
	// (admission.DefaultWriteLimit; PerSecond 0 turns it off).
	RateLimit admission.RateLimit
	// ReadLimit is the per-agent budget of read calls (admission.DefaultReadLimit).
	ReadLimit admission.RateLimit
	// SearchLimit is the per-agent budget of searches
	// (admission.DefaultSearchLimit); SearchSlots the searches the whole
	// hub runs at once (0: 2).
	SearchLimit admission.RateLimit
	SearchSlots int
	// JoinRateLimit is the hub-wide budget of join attempts
	// (admission.DefaultJoinLimit), JoinSourceLimit that of one source
	// address (admission.DefaultJoinSourceLimit), JoinCodeLimit that of
	// one join code (admission.DefaultJoinCodeLimit).
	JoinRateLimit, JoinSourceLimit, JoinCodeLimit admission.RateLimit
	// HTTPAllowedHosts are the Host names the HTTP port answers besides
	// loopback names when it listens on loopback (--http-allowed-hosts);
	// on another address, the only ones it answers when given.
	HTTPAllowedHosts []string
	// MetricsToken, when set, is the bearer token /metrics asks for.
	MetricsToken string
	// ConnLimits bounds network connections (DefaultConnLimits; guard.go).
	ConnLimits ConnLimits

	Clock  hub.Clock
	Logger *slog.Logger

	// Set by Start.
	Store      Store
	Services   *hub.Services
	parked     *hub.Waiters // the registry of parked callers under Services
	Gate       *admission.Gate
	Server     *server.Server
	grpcLis    net.Listener
	httpLis    net.Listener
	conns      *connLimiter
	lock       *os.File // the data dir's lock (datadir.go), held until Close
	grpcSrv    *grpc.Server
	ca         *tlsca.Authority // the hub's own CA, when it serves TLS with it (tls.go)
	httpSrv    *http.Server
	direct     *inproc.Conn // in-process calls without gRPC transport (REST, MCP over HTTP)
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	extras     []func(ctx context.Context) error // components started by Start (orchestrator, …)
	tickStats  func() server.TickStats
	leading    func() bool                     // whether this process ran the last tick (orchestrator.go)
	leader     orchestrator.Leader             // set by openDatabase
	watchPosts func(ctx context.Context) error // other replicas' posts and changed agents; nil for SQLite
	metrics    *metrics.Metrics                // Prometheus registry (metrics.go)
	closeOnce  sync.Once
	closeErr   error
}

// NewMain returns a Main with the defaults.
func NewMain() *Main {
	return &Main{
		GRPCAddr:          "127.0.0.1:7700",
		HTTPAddr:          "127.0.0.1:7701",
		Config:            hub.DefaultConfig(),
		Synchronous:       "NORMAL",
		RateLimit:         admission.DefaultWriteLimit,
		ReadLimit:         admission.DefaultReadLimit,
		SearchLimit:       admission.DefaultSearchLimit,
		JoinRateLimit:     admission.DefaultJoinLimit,
		JoinSourceLimit:   admission.DefaultJoinSourceLimit,
		JoinCodeLimit:     admission.DefaultJoinCodeLimit,
		ConnLimits:        DefaultConnLimits,
		TickInterval:      5 * time.Second,
		BeatInterval:      5 * time.Minute,
		InactivityTimeout: 10 * time.Minute,
		RetireAfter:       hub.DefaultRetireAfter,
		QueuedNoticeAfter: hub.DefaultScheduleSettings().QueuedNoticeAfter,
		NoticeCap:         hub.DefaultNoticeCap,
		Clock:             hub.SystemClock{},
	}
}

// GRPCAddress returns the address the gRPC server listens on (after Start).
func (m *Main) GRPCAddress() string { return m.grpcLis.Addr().String() }

// HTTPAddress returns the address the HTTP server listens on (after Start), "" if none.
func (m *Main) HTTPAddress() string {
	if m.httpLis == nil {
		return ""
	}
	return m.httpLis.Addr().String()
}

// Conn returns the in-process connection to this hub's API (no network, no
// TLS, no encoding; the interceptors of the gRPC server): the one REST and
// MCP over HTTP call it on.
func (m *Main) Conn() grpc.ClientConnInterface { return m.direct }

// AdminToken reads the admin token from its file.
func (m *Main) AdminToken() (string, error) {
	path := datadir.AdminTokenFile(m.DataDir)
	if m.AdminTokenPath != "" {
		path = m.AdminTokenPath
	}
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// Start opens the store and starts serving. It returns once the listeners
// are bound; Close stops everything.
func (m *Main) Start(ctx context.Context) (err error) {
	m.setDefaults()
	if err := m.validate(); err != nil {
		return err
	}
	if err := admission.Check(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	runCtx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	if err := m.openStore(ctx); err != nil {
		return err
	}
	tlsCfg, err := m.loadTLS() // after openStore: the data dir is this hub's
	if err != nil {
		return err
	}
	if err := m.startService(ctx, runCtx); err != nil {
		return err
	}
	if err := m.startOrchestrator(runCtx); err != nil {
		return err
	}
	m.startRenewal(runCtx)
	m.newServer()
	if err := m.serveGRPC(tlsCfg); err != nil {
		return err
	}
	m.connectInProcess()
	if err := m.serveHTTP(runCtx, tlsCfg); err != nil {
		return err
	}
	m.Logger.Info("hub started", "version", version.Version(), "grpc", m.GRPCAddress(), "http", m.HTTPAddress(), "data_dir", m.DataDir)
	if m.ca != nil {
		m.Logger.Info("serving TLS with the hub's own CA; agents pin it by its fingerprint (hubctl join-codes create prints the line to run)",
			"ca_fingerprint", m.ca.Fingerprint(), "ca_file", datadir.CAFile(m.DataDir), "cert_expires", m.ca.NotAfter().UTC().Format(time.RFC3339))
	}
	if u := m.dashboardURL(); u != "" {
		m.Logger.Info("dashboard: open "+u+" and sign in with the admin token", "url", u, "admin_token_file", datadir.AdminTokenFile(m.DataDir))
	}
	return nil
}

// setDefaults fills the fields a caller may leave zero.
func (m *Main) setDefaults() {
	if m.Logger == nil {
		m.Logger = slog.Default()
	}
	if m.Clock == nil {
		m.Clock = hub.SystemClock{}
	}
	if m.DataDir == "" {
		m.DataDir = datadir.Default()
	}
}

// validate checks the settings before anything is created.
func (m *Main) validate() error {
	if err := m.checkAddrs(); err != nil {
		return err
	}
	if err := m.Config.Health.Validate(); err != nil {
		return fmt.Errorf("health thresholds: %w", err)
	}
	if err := m.checkLimits(); err != nil {
		return err
	}
	if err := m.scheduleSettings().Validate(); err != nil {
		return fmt.Errorf("orchestrator settings: %w", err)
	}
	return nil
}

// openStore creates the data dir and the admin token if needed and opens
// the SQLite store.
func (m *Main) openStore(ctx context.Context) error {
	if err := os.MkdirAll(m.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir %s: %w", m.DataDir, err)
	}
	m.warnOpenDataDir()
	if m.DatabaseURL == "" {
		// SQLite: one hub per data dir, and never an empty hub by mistake.
		lock, ranBefore, err := lockDataDir(m.DataDir)
		if err != nil {
			return err
		}
		m.lock = lock
		if err := m.checkDatabasePresent(ranBefore); err != nil {
			return err
		}
	}
	adminToken, created, err := m.adminToken()
	if err != nil {
		return err
	}
	if created {
		m.Logger.Info("created the admin token; hubctl finds it through --data-dir or HUB_DATA_DIR", "file", datadir.AdminTokenFile(m.DataDir))
	}
	m.Config.AdminTokenHash = hub.HashToken(adminToken)
	if err := m.openDatabase(ctx); err != nil {
		return err
	}
	if err := m.recordAdminToken(ctx, m.Config.AdminTokenHash); err != nil {
		return fmt.Errorf("record the admin token in the store: %w", err)
	}
	return nil
}

// startService creates the domain service over the store, loads its
// in-memory state and starts its fallback watcher (ended by runCtx).
func (m *Main) startService(ctx, runCtx context.Context) error {
	m.initMetrics() // before the service: it reports to Config.Metrics
	if err := m.startConnLimiter(); err != nil {
		return err
	}
	m.parked = hub.NewWaiters(m.Config.WaitLimits, m.Clock)
	m.Services = hub.NewServices(hub.NewCore(m.Store, m.Clock, m.Config, m.parked))
	if err := m.Services.Init(ctx); err != nil {
		return fmt.Errorf("load state: %w", err)
	}
	m.goRun(func() error { return m.Services.Waits.Run(runCtx) })
	m.startLoop(runCtx)
	if m.watchPosts != nil {
		m.goRun(func() error { return m.watchPosts(runCtx) })
	}
	return nil
}

// newServer creates the gate that admits every call, whichever way it
// comes, and the gRPC handlers over the service.
func (m *Main) newServer() {
	opts := admission.DefaultOptions()
	opts.Write, opts.Read, opts.Search, opts.SearchSlots = m.RateLimit, m.ReadLimit, m.SearchLimit, m.SearchSlots
	opts.Join, opts.JoinSource, opts.JoinCode = m.JoinRateLimit, m.JoinSourceLimit, m.JoinCodeLimit
	opts.People, opts.Clock = m.Services.People, m.Clock
	m.Gate = admission.New(m.Services.Agents, opts)
	m.Server = server.New(m.Services, m.Gate, server.Info{
		DataDir:       m.DataDir,
		SchemaVersion: m.Store.SchemaVersion,
		TickStats:     m.tickStats,
		CAFingerprint: m.caFingerprint(),
	}, m.Logger)
	// A call a stream carries is the call: logged, counted and admitted as
	// the call alone, and counted apart as carried.
	m.Server.CarryThrough(append([]grpc.UnaryServerInterceptor{m.metrics.CarriedInterceptor}, m.unaryInterceptors()...)...)
}

// unaryInterceptors are what every unary call goes through, over gRPC and
// in process: logging first, so that calls refused by authentication are
// logged too, then metrics, authentication with rate limits and error
// mapping, and the dashboard's feed.
func (m *Main) unaryInterceptors() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{
		server.LoggingInterceptor(m.Logger, m.Server.RefusalLog(), m.Clock), m.metrics.UnaryInterceptor, m.Server.UnaryInterceptor,
		server.FeedInterceptor(m.Services.Core.Feed()),
	}
}

// grpcOptions are the gRPC server's options, without transport credentials
// and without the bounds of the network listener (guardOptions).
func (m *Main) grpcOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(m.unaryInterceptors()...),
		grpc.ChainStreamInterceptor(m.Server.StreamInterceptor),
		grpc.MaxRecvMsgSize(4 << 20),
		grpc.ForceServerCodecV2(m.Server.Codec()),
	}
}

// serveGRPC listens on GRPCAddr and serves the API there.
func (m *Main) serveGRPC(tlsCfg *tls.Config) error {
	// The network listener also bounds what one client may take (guard.go);
	// REST and MCP calls come in process instead, already bounded by the
	// gateway and the MCP handler.
	opts := append(m.guardOptions(), m.grpcOptions()...)
	if tlsCfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	m.grpcSrv = grpc.NewServer(opts...)
	m.Server.Register(m.grpcSrv)
	var err error
	if m.grpcLis, err = m.listen(m.GRPCAddr); err != nil {
		return fmt.Errorf("listen for gRPC on %s: %w (is another hub running? choose another address with --grpc-addr)", m.GRPCAddr, err)
	}
	m.goRun(func() error { return m.grpcSrv.Serve(m.grpcLis) })
	return nil
}

// connectInProcess registers the services on the in-process connection
// REST and MCP over HTTP call the API on: the handlers run on the HTTP
// request's goroutine through the gRPC server's unary interceptors, with no
// gRPC transport or encoding in between.
func (m *Main) connectInProcess() {
	m.direct = inproc.New(m.unaryInterceptors()...)
	m.Server.Register(m.direct)
}

// serveHTTP listens on HTTPAddr, unless it is off, and serves the REST
// gateway with MCP over HTTP at /mcp, the metrics at /metrics and the
// dashboard at /.
func (m *Main) serveHTTP(runCtx context.Context, tlsCfg *tls.Config) error {
	if m.HTTPAddr == "" || m.HTTPAddr == "off" {
		return nil
	}
	extra := map[string]http.Handler{
		"/mcp":         m.mcpHandler(),
		"GET /metrics": m.metricsHandler(),
	}
	// The hosts' own telemetry (OTLP/HTTP): what each agent spends, and
	// the tools it runs as its activity.
	otlp := &usage.Receiver{Gate: m.Gate, Usage: m.Services.Usage, Meter: usage.NewMeter()}
	for pattern, h := range otlp.Routes() {
		extra[pattern] = h
	}
	dash := m.newDashboard(extra)
	// Longer than the longest wait (WaitMax) plus its margin; every REST
	// call answers a few seconds before it (CallMax), so no park, however
	// long it was asked to be (an approval's may be minutes), runs into it
	// and ends in an empty reply.
	writeTimeout := m.Config.WaitMax + 30*time.Second
	h, err := gateway.New(runCtx, m.direct, gateway.Options{
		CallMax:   writeTimeout - restReplyMargin,
		Ready:     m.ready,
		Extra:     extra,
		Version:   version.Version(),
		Gate:      m.Gate,
		AllowHost: gateway.AllowHosts(loopback.Addr(m.HTTPAddr), m.HTTPAllowedHosts),
		Refused: func(r *http.Request, reason string) {
			m.Server.LogRefusal(r.Context(), r.Method+" "+r.URL.Path, r.RemoteAddr, reason)
		},
	})
	if err != nil {
		return fmt.Errorf("REST gateway: %w", err)
	}
	m.httpSrv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       2 * time.Minute,
		TLSConfig:         tlsCfg,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn), // TLS handshake errors and the like
	}
	m.httpSrv.RegisterOnShutdown(dash.Close)
	if m.httpLis, err = m.listen(m.HTTPAddr); err != nil {
		return fmt.Errorf("listen for HTTP on %s: %w (is another hub running? choose another address with --http-addr)", m.HTTPAddr, err)
	}
	m.goRun(func() error {
		var err error
		if tlsCfg != nil {
			err = m.httpSrv.ServeTLS(m.httpLis, "", "")
		} else {
			err = m.httpSrv.Serve(m.httpLis)
		}
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	})
	return nil
}

// ready is the readiness check of /readyz: the disk not full, migrations
// applied and the store answering.
func (m *Main) ready(ctx context.Context) error {
	if f, ok := m.Store.(diskFuller); ok && f.DiskFull() {
		return errors.New("disk full: writes fail until there is room (reads are served)")
	}
	if v := m.Store.SchemaVersion(); v <= 0 {
		return fmt.Errorf("no store migrations applied (schema version %d)", v)
	}
	return m.Store.View(ctx, func(tx hub.Tx) error { _, err := tx.MaxMessageID(); return err })
}

// goRun runs f in a tracked goroutine; Close waits for it.
func (m *Main) goRun(f func() error) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := f(); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			m.Logger.Error("component stopped", "err", err)
		}
	}()
}

// Close stops serving (parked waits end), stops the orchestrator and closes
// the store after its pending writes.
func (m *Main) Close() error {
	m.closeOnce.Do(func() {
		var errs []error
		if m.Services != nil {
			m.Services.Core.Shutdown() // parked waits answer now; the servers drain fast
		}
		if m.httpSrv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if err := m.httpSrv.Shutdown(ctx); err != nil {
				m.httpSrv.Close()
			}
			cancel()
		}
		if m.cancel != nil {
			m.cancel() // ends waits' fallback watcher and the orchestrator
		}
		if m.grpcSrv != nil {
			stopped := make(chan struct{})
			go func() { m.grpcSrv.GracefulStop(); close(stopped) }()
			timeout := m.Clock.NewTimer(2 * time.Second)
			select {
			case <-stopped:
			case <-timeout.C():
				m.grpcSrv.Stop() // parked waits do not hold shutdown up
			}
			timeout.Stop()
		}
		for _, f := range m.extras {
			errs = append(errs, f(context.Background()))
		}
		m.wg.Wait()
		if m.Store != nil {
			errs = append(errs, m.Store.Close())
		}
		if m.lock != nil {
			m.lock.Close() // releases the data dir for the next hub
		}
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}

// Run starts the hub and serves until ctx ends.
func (m *Main) Run(ctx context.Context) error {
	if err := m.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	m.Logger.Info("shutting down")
	return m.Close()
}

// ensureAdminToken reads the admin token file, creating it (0600) if missing.
func ensureAdminToken(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), false, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", false, fmt.Errorf("read admin token: %w", err)
	}
	token, _ = hub.NewToken()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("write admin token: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("write admin token: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", false, fmt.Errorf("write admin token: %w", err)
	}
	return token, true, f.Close()
}
