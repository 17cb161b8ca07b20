package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/castore"
	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/loopback"
	"github.com/agenthub/hub/internal/termtext"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// defaultAddr is the hub's default gRPC address.
const defaultAddr = "127.0.0.1:7700"

// cli is what a command gets: clients, output, and the global settings.
type cli struct {
	// admin calls the AdminService with the admin token.
	admin hubv1.AdminServiceClient
	// agent calls the AgentService with the agent token (--token/HUB_TOKEN).
	agent hubv1.AgentServiceClient
	// asAdmin calls the AgentService with the admin token: the calls
	// whose admission names the admin too (GetTask, receipts).
	asAdmin hubv1.AgentServiceClient
	// out is where results go (stdout); errOut is for progress and
	// warnings. Both remove what a terminal would act on (termtext).
	out, errOut *termtext.Writer
	in          io.Reader
	// json is set by -o json.
	json bool

	// Global settings.
	addr       string
	token      string // agent token: --token / HUB_TOKEN
	adminToken string // --admin-token / HUB_ADMIN_TOKEN, else read from dataDir
	dataDir    string
	output     string
	useTLS     bool
	tlsCA      string
	getenv     func(string) string

	commands map[string]*command // every command by name
	cmd      *command            // the running command
	flagErr  bool                // a flag set printed a usage error

	connOnce sync.Once
	conn     *grpc.ClientConn
	connErr  error

	adminOnce    sync.Once
	adminTok     string
	adminTokFrom string
	adminTokErr  error
}

func newCLI(getenv func(string) string, stdin io.Reader, stdout, stderr *termtext.Writer) *cli {
	c := &cli{out: stdout, errOut: stderr, in: stdin, getenv: getenv, commands: indexCommands(commandTable())}
	c.admin = hubv1.NewAdminServiceClient(&lazyConn{c: c, admin: true})
	c.agent = hubv1.NewAgentServiceClient(&lazyConn{c: c})
	c.asAdmin = hubv1.NewAgentServiceClient(&lazyConn{c: c, admin: true})
	return c
}

func (c *cli) close() {
	if c.conn != nil {
		c.conn.Close()
	}
}

// env returns an environment variable or def.
func (c *cli) env(name, def string) string {
	if v := c.getenv(name); v != "" {
		return v
	}
	return def
}

// globalFlags defines the global flags on fs.
func (c *cli) globalFlags(fs *flag.FlagSet) {
	defDataDir := c.getenv("HUB_DATA_DIR")
	if defDataDir == "" {
		defDataDir = datadir.Default()
	}
	fs.StringVar(&c.addr, "addr", c.env("HUB_ADDR", defaultAddr), "hub gRPC address; env HUB_ADDR")
	fs.StringVar(&c.token, "token", c.getenv("HUB_TOKEN"), "agent token for agent commands (status); env HUB_TOKEN")
	fs.StringVar(&c.adminToken, "admin-token", c.getenv("HUB_ADMIN_TOKEN"), "admin token; env HUB_ADMIN_TOKEN (default: read <data-dir>/admin.token)")
	fs.StringVar(&c.dataDir, "data-dir", defDataDir, "hub data dir holding admin.token; env HUB_DATA_DIR")
	fs.StringVar(&c.output, "o", "table", "output format: table or json")
	fs.BoolVar(&c.useTLS, "tls", false, "connect with TLS (system roots, or --tls-ca); a hub whose CA hub setup kept for --addr is always reached with TLS and that CA")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "PEM file of the CA that signed the hub's certificate (implies --tls)")
}

// parseGlobal removes the global flags from anywhere in args (up to a "--")
// and applies them; it returns the rest.
func (c *cli) parseGlobal(args []string) ([]string, error) {
	fs := flag.NewFlagSet("hubctl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.globalFlags(fs)
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if (a == "-h" || a == "-help" || a == "--help") && len(rest) == 0 {
			return nil, flag.ErrHelp
		}
		name, hasValue := flagName(a)
		f := fs.Lookup(name)
		if name == "" || f == nil {
			rest = append(rest, a)
			continue
		}
		seg := []string{a}
		if isBool(f) || hasValue {
			// --tls or --addr=x: one argument
		} else if i+1 < len(args) {
			seg = append(seg, args[i+1])
			i++
		} else {
			return nil, fmt.Errorf("flag -%s needs a value", name)
		}
		if err := fs.Parse(seg); err != nil {
			return nil, err
		}
	}
	switch c.output {
	case "json":
		c.json = true
	case "table", "text", "":
	default:
		return nil, fmt.Errorf("-o %q: use table or json", c.output)
	}
	if c.tlsCA != "" {
		c.useTLS = true
	}
	return rest, nil
}

// flagName returns the name of a "-x", "--x" or "--x=v" argument.
func flagName(a string) (name string, hasValue bool) {
	if len(a) < 2 || a[0] != '-' {
		return "", false
	}
	a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	name, _, hasValue = strings.Cut(a, "=")
	return name, hasValue
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flags returns a flag set for the subcommand name: -h and flag errors print
// the command's synopsis and its flags.
func (c *cli) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("hubctl "+name, flag.ContinueOnError)
	fs.SetOutput(c.errOut)
	cmd := c.commands[name]
	fs.Usage = func() {
		c.flagErr = true
		w := fs.Output()
		if cmd != nil {
			fmt.Fprintf(w, "Usage: %s\n", synopsis(cmd))
			if cmd.summary != "" {
				fmt.Fprintf(w, "\n%s\n", cmd.summary)
			}
		} else {
			fmt.Fprintf(w, "Usage: hubctl %s\n", name)
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
		fmt.Fprint(w, "\nGlobal flags (--addr, --data-dir, --token, -o json, …): see \"hubctl help\".\n")
	}
	return fs
}

// parse parses args with fs, allowing flags before and after positional
// arguments ("agent add alice --role coder"); "--" ends the flags. It
// returns the positional arguments.
func (c *cli) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// dial connects once (lazily: grpc.NewClient does not block).
func (c *cli) dial() (*grpc.ClientConn, error) {
	c.connOnce.Do(func() {
		creds := insecure.NewCredentials()
		stored, err := castore.ClientConfig(c.addr)
		if err != nil {
			c.connErr = err
			return
		}
		if stored == nil && c.tlsCA == "" && !loopback.Addr(c.addr) {
			// A hub on this machine serving TLS with its own CA.
			if _, err := os.Stat(datadir.CAFile(c.dataDir)); err == nil {
				c.tlsCA = datadir.CAFile(c.dataDir)
				c.useTLS = true
			}
		}
		if stored != nil && c.tlsCA == "" {
			// The CA kept for this address by hub setup's join line.
			creds = credentials.NewTLS(stored)
			c.useTLS = true
		} else if c.useTLS {
			cfg := &tls.Config{MinVersion: tls.VersionTLS12}
			if c.tlsCA != "" {
				pem, err := os.ReadFile(c.tlsCA)
				if err != nil {
					c.connErr = fmt.Errorf("read --tls-ca: %w", err)
					return
				}
				pool := x509.NewCertPool()
				if !pool.AppendCertsFromPEM(pem) {
					c.connErr = fmt.Errorf("--tls-ca %s holds no PEM certificate", c.tlsCA)
					return
				}
				cfg.RootCAs = pool
			}
			creds = credentials.NewTLS(cfg)
		}
		c.conn, c.connErr = grpc.NewClient(c.addr, grpc.WithTransportCredentials(creds))
		if c.connErr != nil {
			c.connErr = fmt.Errorf("hub address %q: %w (give host:port with --addr or HUB_ADDR)", c.addr, c.connErr)
		}
	})
	return c.conn, c.connErr
}

// adminTokenFile is where the admin token is expected.
func (c *cli) adminTokenFile() string { return datadir.AdminTokenFile(c.dataDir) }

// adminCredential returns the admin token and where it came from.
func (c *cli) adminCredential() (string, string, error) {
	c.adminOnce.Do(func() {
		if c.adminToken != "" {
			c.adminTok, c.adminTokFrom = c.adminToken, "--admin-token/HUB_ADMIN_TOKEN"
			return
		}
		file := c.adminTokenFile()
		b, err := os.ReadFile(file)
		if err == nil && strings.TrimSpace(string(b)) != "" {
			c.adminTok, c.adminTokFrom = strings.TrimSpace(string(b)), file
			return
		}
		switch {
		case err == nil:
			c.adminTokErr = fmt.Errorf("admin token file %s is empty: restart the hub to recreate it, or pass --admin-token", file)
		case errors.Is(err, os.ErrNotExist):
			c.adminTokErr = fmt.Errorf("no admin token at %s: the hub writes it to <data-dir>/admin.token on first start; "+
				"if the hub runs, point hubctl at its data dir with --data-dir or HUB_DATA_DIR, or pass --admin-token; if not, start it with `hub`", file)
		default:
			c.adminTokErr = fmt.Errorf("read the admin token: %w (it is in the hub's <data-dir>/admin.token; give --data-dir or --admin-token)", err)
		}
	})
	return c.adminTok, c.adminTokFrom, c.adminTokErr
}

// agentCredential returns the agent token.
func (c *cli) agentCredential() (string, error) {
	if c.token == "" {
		name := "this command"
		if c.cmd != nil {
			name = "`hubctl " + c.cmd.name + "`"
		}
		return "", fmt.Errorf("%s acts as an agent and needs its token: give --token or set HUB_TOKEN "+
			"(`hubctl agent add NAME` prints a new agent's token, `hubctl agent token rotate NAME` a new one)", name)
	}
	return c.token, nil
}

// bearer is a per-RPC credential sending "authorization: Bearer <token>".
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }

// lazyConn is a grpc.ClientConnInterface that dials on first use and adds
// the admin or the agent token to each call.
type lazyConn struct {
	c     *cli
	admin bool
}

func (l *lazyConn) callOpts(opts []grpc.CallOption) (*grpc.ClientConn, []grpc.CallOption, error) {
	cc, err := l.c.dial()
	if err != nil {
		return nil, nil, err
	}
	var tok string
	if l.admin {
		tok, _, err = l.c.adminCredential()
	} else {
		tok, err = l.c.agentCredential()
	}
	if err != nil {
		return nil, nil, err
	}
	return cc, append(opts, grpc.PerRPCCredentials(bearer{token: tok, secure: l.c.useTLS})), nil
}

// Invoke implements grpc.ClientConnInterface.
func (l *lazyConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	cc, opts, err := l.callOpts(opts)
	if err != nil {
		return err
	}
	return l.wrap(cc.Invoke(ctx, method, args, reply, opts...))
}

// NewStream implements grpc.ClientConnInterface.
func (l *lazyConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cc, opts, err := l.callOpts(opts)
	if err != nil {
		return nil, err
	}
	s, err := cc.NewStream(ctx, desc, method, opts...)
	return s, l.wrap(err)
}

// rpcError is a gRPC error with the side (admin or agent) that made the call,
// so that the message can say which token was refused. status.Code and
// status.FromError see through it.
type rpcError struct {
	err   error
	admin bool
}

func (e *rpcError) Error() string              { return e.err.Error() }
func (e *rpcError) Unwrap() error              { return e.err }
func (e *rpcError) GRPCStatus() *status.Status { return status.Convert(e.err) }

func (l *lazyConn) wrap(err error) error {
	if err == nil {
		return nil
	}
	return &rpcError{err: err, admin: l.admin}
}

// explain turns an error into a sentence for people.
func (c *cli) explain(err error) string {
	var re *rpcError
	if !errors.As(err, &re) {
		return err.Error()
	}
	st := status.Convert(re.err)
	msg := st.Message()
	switch st.Code() {
	case codes.Unavailable:
		switch {
		case strings.Contains(msg, "does not look like a TLS handshake"):
			return fmt.Sprintf("the hub at %s does not serve TLS: drop --tls / --tls-ca\n  (%s)", c.addr, msg)
		case strings.Contains(msg, "x509") || strings.Contains(msg, "certificate") || strings.Contains(msg, "tls:"):
			return fmt.Sprintf("TLS handshake with the hub at %s failed: give the CA that signed its certificate with --tls-ca FILE\n  (%s)", c.addr, msg)
		case !c.useTLS && strings.Contains(msg, "server preface"):
			return fmt.Sprintf("the hub at %s closed the connection: if it serves TLS (--tls-cert), add --tls and --tls-ca FILE\n  (%s)", c.addr, msg)
		}
		if isConnectionError(msg) {
			return fmt.Sprintf("cannot reach hub at %s: is it running? start it with `hub` (or point hubctl at it with --addr / HUB_ADDR)\n  (%s)", c.addr, msg)
		}
		return "hub unavailable: " + msg
	case codes.Unauthenticated:
		if re.admin {
			_, from, _ := c.adminCredential()
			return fmt.Sprintf("the hub refused the admin token from %s: %s\n  The hub writes its admin token to <data-dir>/admin.token on first start; "+
				"hubctl reads it from %s (set --data-dir or HUB_DATA_DIR to the hub's data dir, or pass --admin-token).", from, msg, c.adminTokenFile())
		}
		return fmt.Sprintf("the hub refused the agent token (--token / HUB_TOKEN): %s", msg)
	case codes.DeadlineExceeded:
		return "the hub did not answer in time: " + msg
	case codes.Canceled:
		return "cancelled"
	case codes.Unimplemented:
		return fmt.Sprintf("this hub does not implement that call yet (%s): is hubctl newer than the hub?", msg)
	}
	return msg
}

func isConnectionError(msg string) bool {
	for _, s := range []string{"connection error", "connection refused", "dial", "transport", "no such host", "connection reset", "EOF", "name resolver"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
