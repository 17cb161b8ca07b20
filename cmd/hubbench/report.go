package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

type wakeRow struct {
	mode     string
	waiters  int
	r        *wakeResult
	load     cpuLoad
	timeouts int64 // wait replies that timed out during the run
	waitErrs int64
}

type memRow struct {
	mode          string
	waiters       int
	before, after int64 // VmRSS, KiB
	afterIdle     int64 // VmRSS at the end of the idle window with them parked
	// The Go runtime's view from the hub's /metrics, after minus before
	// (absent if the hub does not export them).
	runtime runtimeDelta
}

// runtimeDelta is how the hub's goroutine stacks, heap and goroutine count
// grew while the waiters parked.
type runtimeDelta struct {
	stack, heap, goroutines float64
	known                   bool
}

// runtimeMetrics are the Go collector's series hubbench reads.
var runtimeMetrics = [3]string{"go_memstats_stack_inuse_bytes", "go_memstats_heap_inuse_bytes", "go_goroutines"}

type idleRow struct {
	mode string
	r    *idleResult
}

// results collects the figures of one run.
type results struct {
	machine    string
	external   bool
	nice       int
	wake       []wakeRow
	mem        []memRow
	idle       []idleRow
	posts      *rateResult
	heartbeats *rateResult
	backlog    *backlogResult
	ticks      []tickRow

	hubCPUs, benchCPUs string // taskset lists, "" if not pinned
}

// Targets the report compares each figure with.
const (
	targetWakeP50     = time.Millisecond
	targetWakeP99     = 5 * time.Millisecond
	targetPostsPerSec = 10000
	targetKiBPerWait  = 16
	// A heartbeat with a backlog costs at most this much more hub CPU
	// than one without.
	targetBacklogRatio = 1.2
)

// tickTarget is the longest acceptable tick with due agents due.
func tickTarget(due int) time.Duration {
	if due > 1000 {
		return 200 * time.Millisecond
	}
	return 20 * time.Millisecond
}

// write prints the Markdown report.
func (r *results) write(w io.Writer, c *config) {
	fmt.Fprintf(w, "Machine: %s\n\n", r.machine)
	if r.nice != 0 {
		fmt.Fprintf(w, "Hub and hubbench ran at nice %d; the last column shows the CPU the rest of the machine used meanwhile.\n\n", r.nice)
	}
	if r.hubCPUs != "" || r.benchCPUs != "" {
		fmt.Fprintf(w, "Pinned with taskset: hub on CPUs %s, hubbench on CPUs %s.\n\n", orAll(r.hubCPUs), orAll(r.benchCPUs))
	}
	fmt.Fprintln(w, "| Benchmark | Wait mode | Parked waiters | Measured | Target | Met | CPU used meanwhile: hub · hubbench · other processes |")
	fmt.Fprintln(w, "|---|---|---:|---|---|---|---|")
	var load cpuLoad
	row := func(bench, mode, waiters, measured, target, met string) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", bench, mode, waiters, measured, target, met, load)
		load = cpuLoad{}
	}
	for _, x := range r.wake {
		lat := x.r.lat
		slices.Sort(lat)
		rtt := slices.Sorted(slices.Values(x.r.postRTT))
		send := slices.Sorted(slices.Values(x.r.sendLat))
		p50, p99 := percentile(lat, .5), percentile(lat, .99)
		m := fmt.Sprintf("p50 **%s** · p90 %s · p99 **%s** · max %s (%d samples; from the post's send: p50 %s · p99 %s; post round trip p50 %s)",
			fmtDur(p50), fmtDur(percentile(lat, .9)), fmtDur(p99), fmtDur(lat[len(lat)-1]), len(lat),
			fmtDur(percentile(send, .5)), fmtDur(percentile(send, .99)), fmtDur(percentile(rtt, .5)))
		var notes []string
		if x.r.lost > 0 {
			notes = append(notes, fmt.Sprintf("%d lost", x.r.lost))
		}
		if x.r.postErrs > 0 {
			notes = append(notes, fmt.Sprintf("%d post errors", x.r.postErrs))
		}
		if x.waitErrs > 0 {
			notes = append(notes, fmt.Sprintf("%d wait errors", x.waitErrs))
		}
		if x.r.beforeAck > 0 {
			notes = append(notes, fmt.Sprintf("%d replies arrived before the post's own reply (counted as 0)", x.r.beforeAck))
		}
		if x.timeouts > 0 {
			notes = append(notes, fmt.Sprintf("%d waits timed out meanwhile", x.timeouts))
		}
		if len(notes) > 0 {
			m += "; " + strings.Join(notes, ", ")
		}
		target, met := "p50 ≤ 1 ms, p99 ≤ 5 ms", yesNo(p50 <= targetWakeP50 && p99 <= targetWakeP99 && x.r.lost == 0)
		if x.mode == "poll" {
			target, met = "— (the seed's design, for comparison)", "—"
		}
		load = x.load
		row("Wake latency: post acknowledged → waiter's reply", x.mode, num(x.waiters), m, target, met)
	}
	if p := r.posts; p != nil {
		load = p.load
		row(fmt.Sprintf("Acknowledged posts/s, %d senders, %s", c.senders, c.duration), "notify", "0",
			fmt.Sprintf("**%s/s** (%s posts; per post p50 %s · p99 %s%s; %d errors)", num(int(p.perSec())), num(int(p.ok)),
				fmtDur(percentile(p.lat, .5)), fmtDur(percentile(p.lat, .99)), p.cpuPerOp()+p.batching(), p.errs),
			"≥ 10,000/s", yesNo(p.perSec() >= targetPostsPerSec && p.errs == 0))
	}
	if h := r.heartbeats; h != nil {
		load = h.load
		row(fmt.Sprintf("Heartbeats/s, %d senders, %s", c.senders, c.duration), "notify", "0",
			fmt.Sprintf("**%s/s** (per call p50 %s · p99 %s%s; %d errors)", num(int(h.perSec())),
				fmtDur(percentile(h.lat, .5)), fmtDur(percentile(h.lat, .99)), h.cpuPerOp()+h.batching(), h.errs), "—", "—")
	}
	if bl := r.backlog; bl != nil {
		for _, x := range []struct {
			label string
			r     *rateResult
		}{{"no unread message", bl.none}, {fmt.Sprintf("%s unread each", num(bl.perAgent)), bl.with}} {
			load = x.r.load
			row(fmt.Sprintf("Heartbeats/s, %d agents with %s, %s", c.senders, x.label, c.duration), "notify", "0",
				fmt.Sprintf("**%s/s** (per call p50 %s · p99 %s%s; %d errors)", num(int(x.r.perSec())),
					fmtDur(percentile(x.r.lat, .5)), fmtDur(percentile(x.r.lat, .99)), x.r.cpuPerOp(), x.r.errs), "—", "—")
		}
		n, w := bl.none.cpuPer(), bl.with.cpuPer()
		meas, met := "hub CPU per heartbeat unknown (no process to measure)", "—"
		if n > 0 && w > 0 {
			meas = fmt.Sprintf("hub CPU per heartbeat **%s → %s (×%.2f)**; backlog built by %s channel posts in %.1fs (hub CPU %s per post, %d deliveries each)",
				fmtDur(n), fmtDur(w), float64(w)/float64(n), num(bl.posts), bl.build, fmtDur(time.Duration(bl.buildLoad.hub*bl.build/float64(bl.posts)*float64(time.Second))), c.senders)
			met = yesNo(float64(w) <= targetBacklogRatio*float64(n))
		}
		load = cpuLoad{}
		row("Heartbeat cost with ÷ without the backlog", "notify", "0", meas, "≤ ×1.2", met)
		if p := r.posts; p != nil && p.cpuPer() > 0 && n > 0 {
			row("Heartbeat ÷ post, hub CPU per call", "notify", "0",
				fmt.Sprintf("%s ÷ %s = **×%.2f**", fmtDur(n), fmtDur(p.cpuPer()), float64(n)/float64(p.cpuPer())), "≤ ×1", yesNo(n <= p.cpuPer()))
		}
	}
	for _, t := range r.ticks {
		meas := fmt.Sprintf("median **%s** · max %s (%d ticks); hub CPU median %s per tick; %s nudged per tick",
			fmtDur(percentile(t.wall, .5)), fmtDur(t.wall[len(t.wall)-1]), len(t.wall), fmtDur(percentile(t.cpu, .5)), num(t.nudged))
		if t.late > 0 {
			meas += fmt.Sprintf("; %d ticks ran before their agents' calls were all made", t.late)
		}
		target := tickTarget(t.due)
		row(fmt.Sprintf("Orchestrator tick, %s agents (hub bench-seed, then hub serve)", num(t.agents)), "—", "0",
			fmt.Sprintf("%s due: %s", num(t.due), meas), "≤ "+fmtDur(target), yesNo(percentile(t.wall, .5) <= target))
	}
	for _, m := range r.mem {
		per := float64(m.after-m.before) / float64(m.waiters)
		target, met := "≤ 16 KiB", yesNo(per <= targetKiBPerWait)
		if m.mode == "poll" {
			target, met = "—", "—"
		}
		meas := fmt.Sprintf("**%.1f KiB** (VmRSS %.1f → %.1f MiB %s after parking", per, float64(m.before)/1024, float64(m.after)/1024, c.settle)
		if rt := m.runtime; rt.known {
			n := float64(m.waiters)
			meas += fmt.Sprintf("; per waiter: goroutine stacks %.1f KiB, heap in use %.1f KiB, %.2f goroutines", rt.stack/n/1024, rt.heap/n/1024, rt.goroutines/n)
		}
		if m.afterIdle > 0 {
			meas += fmt.Sprintf("; %.1f KiB/waiter at the end of the idle window", float64(m.afterIdle-m.before)/float64(m.waiters))
		}
		row("Hub RSS per parked waiter", m.mode, num(m.waiters), meas+")", target, met)
	}
	byMode := map[string][]idleRow{}
	for _, x := range r.idle {
		byMode[x.mode] = append(byMode[x.mode], x)
	}
	for _, x := range r.idle {
		m := fmt.Sprintf("hub CPU **%.1f ms/s** · %.1f read syscalls/s (/proc/PID/io syscr) over %s", x.r.cpuMsPerSec, x.r.syscrPerSec, x.r.window.Round(100*time.Millisecond))
		if x.r.hasMetric {
			m += fmt.Sprintf(" · %.1f DB queries/s (%s)", x.r.metricPerS, c.dbMetric)
		}
		if x.r.hasStrace {
			m += fmt.Sprintf(" · **%.1f SQLite lock calls/s** (fcntl; read transactions take them), %.1f page reads/s (pread64), under strace", x.r.fcntlPerSec, x.r.preadPerSec)
		} else if x.r.straceErr != nil {
			m += fmt.Sprintf(" · strace: %v", x.r.straceErr)
		}
		if x.r.wakes > 0 {
			m += fmt.Sprintf("; %d wait replies in the window", x.r.wakes)
		}
		target, met := "independent of waiters", "—"
		if x.r.waiters > 0 {
			if base := byMode[x.mode][0]; base.r.waiters == 0 {
				met = yesNo(independent(base.r, x.r))
				if x.mode == "poll" {
					met = "— (" + strings.ToLower(yesNo(independent(base.r, x.r))) + ")"
				}
			}
		}
		load = x.r.load
		row("Idle cost (client silent)", x.mode, num(x.r.waiters), m, target, met)
	}
	// The ratio of the two designs at the same size.
	var nw, pw *wakeRow
	for i := range r.wake {
		x := &r.wake[i]
		if x.mode == "poll" {
			pw = x
		}
	}
	if pw != nil {
		for i := range r.wake {
			if x := &r.wake[i]; x.mode == "notify" && x.waiters == pw.waiters {
				nw = x
			}
		}
	}
	var ni, pi *idleResult
	for _, x := range r.idle {
		if x.r.waiters > 0 && x.mode == "notify" {
			ni = x.r
		}
		if x.r.waiters > 0 && x.mode == "poll" {
			pi = x.r
		}
	}
	var parts []string
	if nw != nil && pw != nil {
		n, p := percentile(nw.r.lat, .5), percentile(pw.r.lat, .5)
		parts = append(parts, fmt.Sprintf("wake p50 %s vs %s%s", fmtDur(p), fmtDur(n), ratio(float64(p), float64(n))))
	}
	if ni != nil && pi != nil && ni.waiters == pi.waiters {
		parts = append(parts, fmt.Sprintf("idle CPU %.1f vs %.1f ms/s%s", pi.cpuMsPerSec, ni.cpuMsPerSec, ratio(pi.cpuMsPerSec, ni.cpuMsPerSec)))
		if pi.hasStrace && ni.hasStrace {
			parts = append(parts, fmt.Sprintf("idle SQLite lock calls %.1f vs %.1f /s%s", pi.fcntlPerSec, ni.fcntlPerSec, ratio(pi.fcntlPerSec, ni.fcntlPerSec)))
		}
	}
	if len(parts) > 0 {
		waiters := 0
		if pw != nil {
			waiters = pw.waiters
		} else {
			waiters = pi.waiters
		}
		row("Poll ÷ notify", "both", num(waiters), strings.Join(parts, "; "), "—", "—")
	}
}

// independent reports whether the idle cost with waiters parked stays
// within noise of the cost without: the best query count available
// within +50% or +1/s, and CPU within +50% or +2 ms/s.
func independent(base, with *idleResult) bool {
	ok := with.cpuMsPerSec <= base.cpuMsPerSec*1.5+2
	switch {
	case with.hasMetric && base.hasMetric:
		ok = ok && with.metricPerS <= base.metricPerS*1.5+1
	case with.hasStrace && base.hasStrace:
		ok = ok && with.fcntlPerSec <= base.fcntlPerSec*1.5+1
	}
	return ok
}

func orAll(cpus string) string {
	if cpus == "" {
		return "any"
	}
	return cpus
}

// ratio returns " (×a/b)", or "" when b is zero (a ratio to nothing says
// nothing).
func ratio(a, b float64) string {
	if b <= 0 {
		return ""
	}
	r := a / b
	if r >= 100 {
		return " (×" + num(int(r+.5)) + ")"
	}
	return fmt.Sprintf(" (×%.1f)", r)
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// fmtDur prints a latency with a unit suited to its size.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

// num prints n with thousands separators.
func num(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + num(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// machineInfo describes the machine: CPUs, CPU model, Go version, kernel.
func machineInfo() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	gov := runtime.Version()
	if out, err := exec.Command("go", "version").Output(); err == nil {
		gov = strings.TrimPrefix(strings.TrimSpace(string(out)), "go version ")
	}
	kernel := ""
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = ", Linux " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d CPUs (nproc), %s, %s%s", runtime.NumCPU(), model, gov, kernel)
}
