package faults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// proc is one process the rig started in a namespace (`ip netns exec`
// execs the command itself, so the PID is the command's).
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // how it ended, once exited is closed
}

// startIn starts argv in namespace ns with its output appended to logPath.
func startIn(ns, logPath string, argv ...string) (*proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "\n==== %s start: %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(argv, " "))
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = cleanEnv()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s in %s: %w", argv[0], ns, err)
	}
	p := &proc{name: filepath.Base(argv[0]), cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// cleanEnv is the environment without the HUB_* variables of the caller.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HUB_") {
			env = append(env, kv)
		}
	}
	return env
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// signal sends sig and waits up to limit for the process to end; past it,
// it sends SIGKILL and waits for that.
func (p *proc) signal(sig syscall.Signal, limit time.Duration) bool {
	if !p.running() {
		return true
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
		return true
	case <-time.After(limit):
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	return false
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() { p.signal(syscall.SIGKILL, time.Minute) }

// pgCluster is the rig's PostgreSQL server, run as the postgres user in
// its namespace, on a data directory made for the run.
type pgCluster struct {
	bin, data, sock, logPath string
	ns                       string
	p                        *proc
}

// pgBinDir returns the newest installed PostgreSQL's bin directory.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) < pgVersion(dirs[j]) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("no PostgreSQL server under /usr/lib/postgresql (scripts/faults.sh installs Debian's postgresql)")
}

func pgVersion(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// asPostgres is the prefix that runs a command as the postgres user.
func asPostgres(argv ...string) []string {
	return append([]string{"setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"}, argv...)
}

// newPGCluster makes a fresh cluster under dir, reachable from the rig's
// addresses without a password (the rig's own namespace only).
func newPGCluster(r *rig, dir string) (*pgCluster, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("the postgres user: %w (install Debian's postgresql)", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c := &pgCluster{bin: bin, data: filepath.Join(dir, "data"), sock: dir, logPath: filepath.Join(dir, "postgres.log"), ns: r.ns("pg")}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	argv := asPostgres(filepath.Join(bin, "initdb"), "-D", c.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
	initdb := exec.Command(argv[0], argv[1:]...)
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	hba, err := os.OpenFile(filepath.Join(c.data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(hba, "host all all %s.0/24 trust\n", subnet)
	return c, hba.Close()
}

// url is the database URL for a client connecting to host:port.
func (c *pgCluster) url(hostPort string) string {
	return "postgres://postgres@" + hostPort + "/postgres?sslmode=disable&connect_timeout=5"
}

// start starts the server and waits until it accepts connections (after
// crash recovery, if it was killed).
func (c *pgCluster) start(ctx context.Context) error {
	argv := asPostgres(filepath.Join(c.bin, "postgres"), "-D", c.data, "-k", c.sock,
		"-c", "listen_addresses="+pgAddr, "-p", strconv.Itoa(pgPort),
		"-c", "max_connections=300", "-c", "log_min_messages=warning")
	p, err := startIn(c.ns, c.logPath, argv...)
	if err != nil {
		return err
	}
	c.p = p
	deadline := time.Now().Add(90 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(cctx, c.url(fmt.Sprintf("%s:%d", pgAddr, pgPort)))
		cancel()
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		if !p.running() {
			return fmt.Errorf("postgres exited at start: %v (log %s)", p.err, c.logPath)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("postgres does not accept connections: %v (log %s)", err, c.logPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop shuts the server down cleanly (a fast shutdown: sessions ended,
// a checkpoint written).
func (c *pgCluster) stop() {
	if c.p != nil {
		c.p.signal(syscall.SIGINT, 60*time.Second)
	}
}

// crash kills every process of the server with SIGKILL at once, as a
// machine crash would (the next start runs crash recovery).
func (c *pgCluster) crash() {
	for _, pid := range namespacePIDs(c.ns) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if c.p != nil {
		<-c.p.exited
	}
	waitGone(namespacePIDs(c.ns), 10*time.Second)
}

// replica is one hub process in its own namespace.
type replica struct {
	i       int
	ns      string
	addr    string
	args    []string
	logPath string

	mu sync.Mutex
	p  *proc
}

func (h *replica) name() string { return fmt.Sprintf("r%d", h.i) }

func (h *replica) grpcTarget() string { return fmt.Sprintf("%s:%d", h.addr, grpcPort) }

func (h *replica) httpBase() string { return fmt.Sprintf("http://%s:%d", h.addr, httpPort) }

// start starts the hub and waits for /healthz; a hub that exits at start
// (the database unreachable) is started again until limit.
func (h *replica) start(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: time.Second}
	for {
		p, err := startIn(h.ns, h.logPath, h.args...)
		if err != nil {
			return err
		}
		h.mu.Lock()
		h.p = p
		h.mu.Unlock()
		for p.running() && time.Now().Before(deadline) && ctx.Err() == nil {
			resp, err := client.Get(h.httpBase() + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		if p.running() {
			p.kill()
			return fmt.Errorf("hub %s not healthy within %v (log %s)", h.name(), limit, h.logPath)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("hub %s exited at start: %v (log %s)", h.name(), p.err, h.logPath)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// kill sends SIGKILL to the hub, if it runs.
func (h *replica) kill() {
	h.mu.Lock()
	p := h.p
	h.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

// stop ends the hub with SIGTERM (SIGKILL after 20 s).
func (h *replica) stop() {
	h.mu.Lock()
	p := h.p
	h.mu.Unlock()
	if p != nil {
		p.signal(syscall.SIGTERM, 20*time.Second)
	}
}

// buildHub builds cmd/hub into dir and returns its path.
func buildHub(dir string) (string, error) {
	gobin := "go"
	if _, err := exec.LookPath(gobin); err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(dir, "hub")
	args := []string{"build", "-o", out}
	if os.Getenv("FAULTS_RACE") == "1" {
		args = append(args, "-race")
	}
	cmd := exec.Command(gobin, append(args, "github.com/agenthub/hub/cmd/hub")...)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build cmd/hub: %v\n%s", err, b)
	}
	return out, nil
}
