package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// hubProc is a hub under test: a child process started by hubbench, or an
// existing hub given by --addr (then pid may be 0 and the process-level
// figures are not available).
type hubProc struct {
	cmd      *exec.Cmd
	bin      string        // the binary, for its other commands (hub mcp)
	exited   chan struct{} // closed when the child exits
	dataDir  string
	logPath  string
	grpcAddr string
	httpAddr string
	pid      int
	token    string // admin token
}

// buildHub compiles the real hub binary (./cmd/hub of this module) into dir.
func buildHub(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "hub")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/agenthub/hub/cmd/hub")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the hub (go build ./cmd/hub): %w\n%s", err, out.String())
	}
	return bin, nil
}

// freeAddr returns a free 127.0.0.1 TCP address. The port is released
// before the hub binds it; a collision makes startHub fail clearly.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startHub runs bin as a child process on free loopback ports with dataDir
// (created if needed) and waits until it answers the admin API. With cpus
// set, the child runs under taskset on those CPUs only (taskset execs the
// hub, so the process ID is the hub's).
func startHub(ctx context.Context, bin, dataDir string, env []string, cpus string, args ...string) (*hubProc, error) {
	grpcAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	httpAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	h := &hubProc{dataDir: dataDir, grpcAddr: grpcAddr, httpAddr: httpAddr, exited: make(chan struct{})}
	h.logPath = filepath.Join(dataDir, fmt.Sprintf("hub-%d.log", time.Now().UnixNano()))
	logf, err := os.Create(h.logPath)
	if err != nil {
		return nil, err
	}
	full := append([]string{"serve", "--data-dir", dataDir, "--grpc-addr", grpcAddr, "--http-addr", httpAddr, "--log-level", "warn"}, args...)
	// The child inherits the nice value of hubbench (see reniceSelf).
	h.cmd = exec.Command(bin, full...)
	if cpus != "" {
		h.cmd = exec.Command("taskset", append([]string{"-c", cpus, bin}, full...)...)
	}
	h.cmd.Stdout, h.cmd.Stderr = logf, logf
	h.cmd.Env = append(os.Environ(), env...)
	if err := h.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start hub: %w", err)
	}
	h.pid = h.cmd.Process.Pid
	go func() { h.cmd.Wait(); logf.Close(); close(h.exited) }()

	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := h.ready(ctx); err == nil {
			return h, nil
		} else if time.Now().After(deadline) || ctx.Err() != nil {
			h.stop()
			return nil, fmt.Errorf("hub did not become ready in 30 s: %v\n%s", err, h.logTail())
		}
		select {
		case <-h.exited:
			return nil, fmt.Errorf("hub exited at start-up:\n%s", h.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ready reads the admin token and checks that the gRPC port accepts connections.
func (h *hubProc) ready(ctx context.Context) error {
	b, err := os.ReadFile(filepath.Join(h.dataDir, "admin.token"))
	if err != nil {
		return err
	}
	h.token = strings.TrimSpace(string(b))
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", h.grpcAddr)
	if err != nil {
		return err
	}
	return c.Close()
}

// metricsURL is the hub's Prometheus endpoint, "" if unknown.
func (h *hubProc) metricsURL() string {
	if h.httpAddr == "" {
		return ""
	}
	return "http://" + h.httpAddr + "/metrics"
}

// stop ends the child: SIGTERM, then SIGKILL after 10 s. Bounded.
func (h *hubProc) stop() {
	if h.cmd == nil {
		return
	}
	select {
	case <-h.exited:
		return
	default:
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
	case <-time.After(10 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.exited
	}
}

func (h *hubProc) logTail() string {
	b, _ := os.ReadFile(h.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// procStats is a sample of the hub process's counters from /proc.
type procStats struct {
	at        time.Time
	rssKiB    int64         // VmRSS
	cpu       time.Duration // utime + stime
	syscr     int64         // read syscalls (read, pread, readv, recvmsg, ...)
	rchar     int64         // bytes read through them
	threads   int64
	metric    float64 // value of the --db-metric counter at /metrics, if found
	hasMetric bool
}

// clkTck is USER_HZ: the unit of utime and stime in /proc/PID/stat. It is
// 100 on every Linux architecture Go supports.
const clkTck = 100

// sample reads the hub's /proc counters (zero if no pid) and the metric.
func (h *hubProc) sample(ctx context.Context, metricName string) (procStats, error) {
	s := procStats{at: time.Now()}
	if h.pid != 0 {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.pid))
		if err != nil {
			return s, fmt.Errorf("read hub process status: %w", err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				s.rssKiB, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			}
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				s.threads, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			}
		}
		cpu, err := procCPU(strconv.Itoa(h.pid))
		if err != nil {
			return s, fmt.Errorf("read hub process stat: %w", err)
		}
		s.cpu = cpu
		io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", h.pid))
		if err != nil {
			return s, fmt.Errorf("read hub process io: %w", err)
		}
		for _, line := range strings.Split(string(io), "\n") {
			k, v, _ := strings.Cut(line, ":")
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			switch k {
			case "syscr":
				s.syscr = n
			case "rchar":
				s.rchar = n
			}
		}
	}
	if metricName != "" && h.httpAddr != "" {
		if v, ok := scrapeMetric(ctx, h.metricsURL(), metricName); ok {
			s.metric, s.hasMetric = v, true
		}
	}
	return s, nil
}

// writeBatches reads the store writer's counters from the hub's /metrics:
// the batches committed and the writes they held; false if unknown.
func (h *hubProc) writeBatches(ctx context.Context) (batches, writes float64, ok bool) {
	if h == nil || h.httpAddr == "" {
		return 0, 0, false
	}
	batches, okB := scrapeMetric(ctx, h.metricsURL(), "hub_store_write_batches_total")
	writes, okW := scrapeMetric(ctx, h.metricsURL(), "hub_store_writes_total")
	return batches, writes, okB && okW
}

// runtimeSample reads runtimeMetrics from the hub's /metrics; false if
// any is missing.
func (h *hubProc) runtimeSample(ctx context.Context) ([3]float64, bool) {
	var v [3]float64
	if h.httpAddr == "" {
		return v, false
	}
	for i, name := range runtimeMetrics {
		x, ok := scrapeMetric(ctx, h.metricsURL(), name)
		if !ok {
			return v, false
		}
		v[i] = x
	}
	return v, true
}

// scrapeMetric returns the sum of the samples of a Prometheus metric (all
// label sets) in the text exposition at url; false if it is not there.
func scrapeMetric(ctx context.Context, url, name string) (float64, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return 0, false
	}
	var sum float64
	found := false
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		if i := strings.LastIndexByte(rest, '}'); i >= 0 {
			rest = rest[i+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}

// reniceSelf sets the nice value of every thread of this process (on Linux
// a priority belongs to a thread; threads started later inherit it).
func reniceSelf(nice int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
			return err
		}
	}
	return nil
}

// pinPID restricts every thread of process pid to the CPUs of list
// (taskset syntax), so that the benchmark and the hub do not take each
// other's cores.
func pinPID(pid int, list string) error {
	out, err := exec.Command("taskset", "-a", "-p", "-c", list, strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("taskset -c %s (is taskset installed, and is the CPU list valid?): %v: %s", list, err, strings.TrimSpace(string(out)))
	}
	return nil
}

var errNoProc = errors.New("no hub process to measure (give --pid with --addr)")

// cpuMeter measures, over a window, the CPU used by the hub, by hubbench
// itself and by every other process of the machine (in CPUs), so that a
// figure taken on a busy machine says so.
type cpuMeter struct {
	at                 time.Time
	busy               int64 // machine-wide busy jiffies
	hub, self          time.Duration
	hasHub, hasMachine bool
}

// cpuLoad is the outcome of a cpuMeter window, in CPUs (1.0 = one core busy).
type cpuLoad struct {
	hub, self, others float64
	known             bool
}

func (l cpuLoad) String() string {
	if !l.known {
		return "—"
	}
	return fmt.Sprintf("%.2f · %.2f · %.2f", l.hub, l.self, l.others)
}

func startCPU(h *hubProc) cpuMeter {
	m := cpuMeter{at: time.Now()}
	m.busy, m.hasMachine = machineBusy()
	m.self, _ = procCPU("self")
	if h != nil && h.pid != 0 {
		var err error
		m.hub, err = procCPU(strconv.Itoa(h.pid))
		m.hasHub = err == nil
	}
	return m
}

func (m cpuMeter) stop(h *hubProc) cpuLoad {
	sec := time.Since(m.at).Seconds()
	busy, ok := machineBusy()
	self, _ := procCPU("self")
	if !ok || !m.hasMachine || !m.hasHub || h == nil || sec <= 0 {
		return cpuLoad{}
	}
	hub, err := procCPU(strconv.Itoa(h.pid))
	if err != nil {
		return cpuLoad{}
	}
	l := cpuLoad{known: true,
		hub:  (hub - m.hub).Seconds() / sec,
		self: (self - m.self).Seconds() / sec,
	}
	l.others = max(0, float64(busy-m.busy)/clkTck/sec-l.hub-l.self)
	return l
}

// machineBusy returns the machine's non-idle jiffies from /proc/stat.
func machineBusy() (int64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, s := range f[1:] {
		n, _ := strconv.ParseInt(s, 10, 64)
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		busy += n
	}
	return busy, true
}

// procCPU returns utime+stime of /proc/<pid>/stat ("self" for hubbench).
func procCPU(pid string) (time.Duration, error) {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%s/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clkTck, nil
}

// straceCounts attaches strace to the hub for d and returns how many times
// each of the given syscalls (comma-separated) was made, by all threads.
// SQLite serves idle reads from its page cache and the memory-mapped WAL
// index, so /proc/PID/io does not see them; but every read transaction
// takes and drops a POSIX file lock (fcntl), which strace does see.
func straceCounts(ctx context.Context, pid int, d time.Duration, syscalls string) (map[string]int64, error) {
	var out bytes.Buffer
	cmd := exec.Command("strace", "-f", "-c", "-q", "-e", "trace="+syscalls, "-p", strconv.Itoa(pid))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("strace: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return nil, fmt.Errorf("strace exited early (%v): %s", err, strings.TrimSpace(out.String()))
	case <-ctx.Done():
	case <-time.After(d):
	}
	_ = cmd.Process.Signal(os.Interrupt) // detach and print the summary
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return nil, errors.New("strace did not detach in 10 s")
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	counts := map[string]int64{}
	for _, name := range strings.Split(syscalls, ",") {
		counts[name] = 0
	}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		name := f[len(f)-1]
		if _, ok := counts[name]; !ok {
			continue
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		counts[name] = n
	}
	// With no traced call at all, strace -c prints no table.
	if o := strings.TrimSpace(out.String()); o != "" && !strings.Contains(o, "% time") {
		return nil, fmt.Errorf("strace: %s", o)
	}
	return counts, nil
}
