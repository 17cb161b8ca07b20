package crash

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
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

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// hubBin is the hub binary built once by TestMain.
var hubBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "hub-crash-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	hubBin = filepath.Join(dir, "hub")
	if err := buildHub(hubBin); err != nil {
		fmt.Fprintln(os.Stderr, "crash: build the hub binary:", err)
		return 1
	}
	return m.Run()
}

// buildHub builds cmd/hub from this module into out. CRASH_RACE=1 builds it
// with the race detector.
func buildHub(out string) error {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	args := []string{"build", "-o", out}
	if os.Getenv("CRASH_RACE") == "1" {
		args = append(args, "-race")
	}
	args = append(args, "github.com/agenthub/hub/cmd/hub")
	cmd := exec.Command(gobin, args...)
	cmd.Dir = "../.." // the module root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// hubProc is one running hub process.
type hubProc struct {
	cmd    *exec.Cmd
	addr   string // gRPC address, once started
	conn   *grpc.ClientConn
	exited chan struct{}

	mu   sync.Mutex
	logs []string // last lines of stderr, for failure reports
}

var startedRE = regexp.MustCompile(`msg="hub started".* grpc=(\S+)`)

// startHub starts the hub binary on dataDir with extra flags. If ready is
// true it waits until the hub logs that it listens and dials it.
func startHub(t *testing.T, dataDir string, extra ...string) *hubProc {
	t.Helper()
	args := append([]string{"serve",
		"--data-dir", dataDir,
		"--grpc-addr", "127.0.0.1:0",
		"--http-addr", "off",
		"--log-level", "info",
	}, extra...)
	p := &hubProc{cmd: exec.Command(hubBin, args...), exited: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	addrC := make(chan string, 1)
	go p.readLogs(stderr, addrC)
	go func() { p.cmd.Wait(); close(p.exited) }()
	select {
	case p.addr = <-addrC:
	case <-p.exited:
		t.Fatalf("hub exited before it was ready:\n%s", p.tail())
	case <-time.After(30 * time.Second):
		p.kill()
		t.Fatalf("hub not ready after 30s:\n%s", p.tail())
	}
	p.conn, err = grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startHubNoWait starts the hub and returns at once: the caller may kill it
// before it is ready (a crash during start-up and migrations).
func startHubNoWait(t *testing.T, dataDir string, extra ...string) *hubProc {
	t.Helper()
	args := append([]string{"serve", "--data-dir", dataDir, "--grpc-addr", "127.0.0.1:0", "--http-addr", "off"}, extra...)
	p := &hubProc{cmd: exec.Command(hubBin, args...), exited: make(chan struct{})}
	p.cmd.Stderr = io.Discard
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	go func() { p.cmd.Wait(); close(p.exited) }()
	return p
}

func (p *hubProc) readLogs(r io.Reader, addrC chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.logs = append(p.logs, line)
		if len(p.logs) > 50 {
			p.logs = p.logs[len(p.logs)-50:]
		}
		p.mu.Unlock()
		if !sent {
			if m := startedRE.FindStringSubmatch(line); m != nil {
				addrC <- m[1]
				sent = true
			}
		}
	}
}

func (p *hubProc) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.logs, "\n")
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *hubProc) kill() {
	if p.conn != nil {
		defer p.conn.Close()
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		panic(err)
	}
	<-p.exited
}

// stop ends the hub gracefully (SIGTERM) and waits for it.
func (p *hubProc) stop(t *testing.T) {
	t.Helper()
	if p.conn != nil {
		p.conn.Close()
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		p.kill()
		t.Errorf("hub did not stop on SIGTERM within 20s:\n%s", p.tail())
	}
}

// withTimeout is a context for one setup or verification call.
func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
