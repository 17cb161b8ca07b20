package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// line is the progress line of one report interval.
func (s *fleetStats) line(iv *interval) string {
	var all latHist
	for _, h := range iv.wake {
		all.merge(h)
	}
	warm := ""
	if iv.warm {
		warm = " (warm-up)"
	}
	sec := iv.end.Sub(s.start).Round(time.Second)
	growth := "" // the store's growth over the interval, per hour
	if prev := s.before(iv); prev != nil && iv.storeBytes > 0 {
		growth = fmt.Sprintf(" (%+.0f MiB/h)", float64(iv.storeBytes-prev.storeBytes)/(1<<20)/iv.end.Sub(prev.end).Hours())
	}
	return fmt.Sprintf("%s%s: hub %.2f cores (hubbench %.2f, others %.2f) · RSS %s · %s goroutines · %s conns · %d fds · post→wake p50 %s p99 %s (%d) · heartbeat p99 %s · tick p50 %s max %s · dashboard p99 %s (%d)%s · store %s%s · %.1f writes/commit · %.0f calls/s · %d errors",
		sec, warm, iv.hubCPU, iv.load.self, iv.load.others, mib(iv.rssKiB*1024), num(int(iv.goroutines)), num(int(iv.conns)), iv.fds,
		fmtDur(all.quantile(.5)), fmtDur(all.quantile(.99)), all.n, fmtDur(iv.heartbeat.quantile(.99)),
		fmtDur(iv.ticks.quantile(.5)), fmtDur(iv.ticks.max), fmtDur(iv.dash.quantile(.99)), iv.dash.n,
		eventReadNote(iv.eventRead), mib(iv.storeBytes), growth, iv.writesPerCommit,
		float64(iv.calls)/s.f.c.reportEvery.Seconds(), iv.errs)
}

// before returns the interval before iv, nil for the first.
func (s *fleetStats) before(iv *interval) *interval {
	for i, x := range s.intervals {
		if x == iv && i > 0 {
			return s.intervals[i-1]
		}
	}
	return nil
}

func eventReadNote(h *latHist) string {
	if h.n == 0 {
		return ""
	}
	return fmt.Sprintf(" · event→read p99 %s", fmtDur(h.quantile(.99)))
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// fleetResult is the end figures: the intervals after the warm-up.
type fleetResult struct {
	Agents      int     `json:"agents"`
	Dashboards  int     `json:"dashboards"`
	DurationS   float64 `json:"duration_s"`
	MeasuredS   float64 `json:"measured_s"`
	Transports  string  `json:"transports"`
	Machine     string  `json:"machine"`
	Load        string  `json:"load_average"`
	HubCPUs     string  `json:"hub_cpus"`
	HubCPUCores float64 `json:"hub_cpu_cores"`
	// CPU per agent-minute and peak RSS per agent: what the CI-sized run
	// holds against its budget.
	CPUPerAgentMinuteMS float64 `json:"hub_cpu_ms_per_agent_minute"`
	HubRSSBytes         int64   `json:"hub_rss_bytes"`
	RSSPerAgentKiB      float64 `json:"hub_rss_kib_per_agent"`
	Goroutines          float64 `json:"goroutines"`
	Connections         float64 `json:"connections"`
	OpenFiles           int     `json:"open_files"`
	PostWakeP50MS       float64 `json:"post_wake_p50_ms"`
	PostWakeP99MS       float64 `json:"post_wake_p99_ms"`
	PostWakeSamples     int64   `json:"post_wake_samples"`
	// From the post's sending (its own latency included); a wake that
	// came before the post's reply counts 0 from the acknowledgement.
	PostWakeFromSendP50MS float64               `json:"post_wake_from_send_p50_ms"`
	PostWakeFromSendP99MS float64               `json:"post_wake_from_send_p99_ms"`
	PostWakeBeforeAck     int64                 `json:"post_wake_before_ack"`
	PostWakeByTransport   map[string][2]float64 `json:"post_wake_p50_p99_ms_by_transport"`
	HeartbeatP99MS        float64               `json:"heartbeat_p99_ms"`
	PostP99MS             float64               `json:"post_p99_ms"`
	TickP50MS             float64               `json:"tick_p50_ms"`
	TickP99MS             float64               `json:"tick_p99_ms"`
	TickMaxMS             float64               `json:"tick_max_ms"`
	Ticks                 int64                 `json:"ticks"`
	DashLatencyP50MS      float64               `json:"dashboard_latency_p50_ms"`
	DashLatencyP99MS      float64               `json:"dashboard_latency_p99_ms"`
	DashSamples           int64                 `json:"dashboard_latency_samples"`
	DashEventReadP99MS    float64               `json:"dashboard_event_to_read_p99_ms,omitempty"`
	DashFirstLoadP50MS    float64               `json:"dashboard_first_load_p50_ms"`
	DashMBPerMinute       float64               `json:"dashboard_mb_per_minute"`
	DashRowsPerMinute     float64               `json:"dashboard_stream_rows_per_minute"`
	StoreBytes            int64                 `json:"store_bytes"`
	StoreGrowthPerHour    float64               `json:"store_growth_bytes_per_hour"`
	WritesPerCommit       float64               `json:"writes_per_commit"`
	CallsPerSecond        float64               `json:"calls_per_second"`
	HooksAtBridgeShare    float64               `json:"hooks_answered_by_bridge_share"`
	// The hook runs of the hosts' events, the whole run: each a call or
	// two (fleet_hooks.go).
	Notifications     int64            `json:"host_notifications"`
	Stops             int64            `json:"host_stops"`
	StopsHeld         int64            `json:"host_stops_held"`
	SessionEnds       int64            `json:"host_session_ends"`
	HostOnStreamShare float64          `json:"host_events_on_stream_share"`
	Errors            int64            `json:"errors"`
	ErrorKinds        map[string]int64 `json:"error_kinds,omitempty"`
	Leak              *leakCheck       `json:"leak_check,omitempty"`

	budget   *fleetConfig
	lastErrs map[string]string
}

// leakCheck compares the first and the last quarter of the intervals
// after the warm-up.
type leakCheck struct {
	RSSGrowth, GoroutineGrowth, FDGrowth float64
	Tolerance                            float64
	StoreGrowthFirst, StoreGrowthLast    float64 // bytes per hour in each half
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (s *fleetStats) result() *fleetResult {
	c := s.f.c
	var ivs []*interval
	first := 0
	for i, iv := range s.intervals {
		if !iv.warm {
			if len(ivs) == 0 {
				first = i
			}
			ivs = append(ivs, iv)
		}
	}
	if len(ivs) == 0 && len(s.intervals) > 0 { // a run shorter than its warm-up
		first, ivs = len(s.intervals)-1, s.intervals[len(s.intervals)-1:]
	}
	r := &fleetResult{Agents: c.agents, Dashboards: c.dashboards, DurationS: c.duration.Seconds(), Machine: machineInfo(),
		Load: loadAvg(), HubCPUs: c.hubCPUs, ErrorKinds: map[string]int64{}, budget: c}
	r.Transports = fmt.Sprintf("%d gRPC, %d gRPC stream, %d MCP /mcp, %d hub mcp", s.f.count(transportGRPC), s.f.count(transportStream), s.f.count(transportHTTP), s.f.count(transportStdio))
	if len(ivs) == 0 {
		return r
	}
	start := s.start
	if first > 0 {
		start = s.intervals[first-1].end
	}
	measured := ivs[len(ivs)-1].end.Sub(start)
	r.MeasuredS = measured.Seconds()
	var cpuSec float64
	var wake, fromSend, hb, ticks, dash, er latHist
	byT := [nTransports]latHist{}
	var calls, rows, bytes int64
	for i, iv := range ivs {
		prev := start
		if i > 0 {
			prev = ivs[i-1].end
		}
		cpuSec += iv.hubCPU * iv.end.Sub(prev).Seconds()
		r.HubRSSBytes = max(r.HubRSSBytes, iv.rssKiB*1024)
		r.Goroutines = max(r.Goroutines, iv.goroutines)
		r.Connections = max(r.Connections, iv.conns)
		r.OpenFiles = max(r.OpenFiles, iv.fds)
		for t, h := range iv.wake {
			wake.merge(h)
			byT[t].merge(h)
		}
		fromSend.merge(iv.wakeFromSend)
		hb.merge(iv.heartbeat)
		ticks.merge(iv.ticks)
		dash.merge(iv.dash)
		er.merge(iv.eventRead)
		calls += iv.calls
		r.Errors += iv.errs
		rows += iv.dashRows
		bytes += iv.dashByte
		if iv.writesPerCommit > 0 {
			r.WritesPerCommit += iv.writesPerCommit / float64(len(ivs))
		}
	}
	r.HubCPUCores = cpuSec / measured.Seconds()
	r.CPUPerAgentMinuteMS = cpuSec * 1000 / (float64(c.agents) * measured.Minutes())
	r.RSSPerAgentKiB = float64(r.HubRSSBytes) / 1024 / float64(c.agents)
	r.PostWakeP50MS, r.PostWakeP99MS, r.PostWakeSamples = ms(wake.quantile(.5)), ms(wake.quantile(.99)), wake.n
	r.PostWakeFromSendP50MS, r.PostWakeFromSendP99MS = ms(fromSend.quantile(.5)), ms(fromSend.quantile(.99))
	r.PostWakeBeforeAck = s.wakes.before.Load()
	r.PostWakeByTransport = map[string][2]float64{}
	for t := range nTransports {
		if byT[t].n > 0 {
			r.PostWakeByTransport[transport(t).String()] = [2]float64{ms(byT[t].quantile(.5)), ms(byT[t].quantile(.99))}
		}
	}
	r.HeartbeatP99MS = ms(hb.quantile(.99))
	r.PostP99MS = ms(s.post.from(first).quantile(.99))
	r.TickP50MS, r.TickP99MS, r.TickMaxMS, r.Ticks = ms(ticks.quantile(.5)), ms(ticks.quantile(.99)), ms(ticks.max), ticks.n
	r.DashLatencyP50MS, r.DashLatencyP99MS, r.DashSamples = ms(dash.quantile(.5)), ms(dash.quantile(.99)), dash.n
	r.DashEventReadP99MS = ms(er.quantile(.99))
	s.firstLoad.rotate()
	r.DashFirstLoadP50MS = ms(s.firstLoad.from(0).quantile(.5))
	r.DashMBPerMinute = float64(bytes) / 1e6 / measured.Minutes()
	r.DashRowsPerMinute = float64(rows) / measured.Minutes()
	r.CallsPerSecond = float64(calls) / measured.Seconds()
	if atBridge, all := s.ok[opHookBridge].Load()+s.ok[opHookStream].Load(), s.ok[opHookBridge].Load()+s.ok[opHookStream].Load()+s.ok[opHook].Load(); all > 0 {
		r.HooksAtBridgeShare = float64(atBridge) / float64(all)
	}
	r.Notifications, r.Stops, r.StopsHeld, r.SessionEnds = s.ok[opNotify].Load(), s.ok[opStop].Load(), s.stopsHeld.Load(), s.ok[opSessionEnd].Load()
	if n := r.Notifications + r.Stops + r.SessionEnds; n > 0 {
		r.HostOnStreamShare = float64(s.hostOnStream.Load()) / float64(n)
	}
	last := ivs[len(ivs)-1]
	r.StoreBytes = last.storeBytes
	r.StoreGrowthPerHour = float64(last.storeBytes-storeAt(s, first)) / measured.Hours()
	s.errMu.Lock()
	for k, v := range s.errKinds {
		r.ErrorKinds[k] = v
	}
	r.lastErrs = s.lastErr
	s.errMu.Unlock()
	if c.soak {
		r.Leak = leakOf(ivs, c.leakTolerance)
	}
	return r
}

func storeAt(s *fleetStats, first int) int64 {
	if first == 0 {
		return s.intervals[0].storeBytes
	}
	return s.intervals[first-1].storeBytes
}

// leakOf compares the medians of the first and last quarter of ivs (at
// least one interval each).
func leakOf(ivs []*interval, tol float64) *leakCheck {
	q := max(1, len(ivs)/4)
	med := func(part []*interval, f func(*interval) float64) float64 {
		v := make([]float64, len(part))
		for i, iv := range part {
			v[i] = f(iv)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	growth := func(f func(*interval) float64) float64 {
		a, b := med(ivs[:q], f), med(ivs[len(ivs)-q:], f)
		if a <= 0 {
			return 0
		}
		return b/a - 1
	}
	l := &leakCheck{Tolerance: tol,
		RSSGrowth:       growth(func(iv *interval) float64 { return float64(iv.rssKiB) }),
		GoroutineGrowth: growth(func(iv *interval) float64 { return iv.goroutines }),
		FDGrowth:        growth(func(iv *interval) float64 { return float64(iv.fds) }),
	}
	half := len(ivs) / 2
	rate := func(part []*interval) float64 {
		if len(part) < 2 {
			return 0
		}
		a, b := part[0], part[len(part)-1]
		return float64(b.storeBytes-a.storeBytes) / b.end.Sub(a.end).Hours()
	}
	l.StoreGrowthFirst, l.StoreGrowthLast = rate(ivs[:half+1]), rate(ivs[half:])
	return l
}

// write prints the end figures as Markdown.
func (r *fleetResult) write(w io.Writer) {
	fmt.Fprintf(w, "## hubbench fleet: %s agents (%s), %d dashboards, %s (figures after a warm-up, over %s)\n\n",
		num(r.Agents), r.Transports, r.Dashboards, time.Duration(r.DurationS*float64(time.Second)), time.Duration(r.MeasuredS*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(w, "Machine: %s; load average %s at the end; hub on CPUs %s.\n\n", r.Machine, r.Load, orAll(r.HubCPUs))
	fmt.Fprintln(w, "| figure | measured | goal at 10,000 agents + 20 dashboards |\n|---|---|---|")
	row := func(name, v, goal string) { fmt.Fprintf(w, "| %s | %s | %s |\n", name, v, goal) }
	row("hub CPU, steady state", fmt.Sprintf("**%.3f cores** (%.2f ms per agent-minute)", r.HubCPUCores, r.CPUPerAgentMinuteMS), "≤ 0.5 core")
	row("hub RSS, peak", fmt.Sprintf("**%s** (%.0f KiB per agent)", mib(r.HubRSSBytes), r.RSSPerAgentKiB), "≤ 1 GiB")
	row("post → wake p50 / p99, from the post's acknowledgement", fmt.Sprintf("%.1f / **%.1f ms** (%s samples; %s; %s came before the acknowledgement, counted 0)", r.PostWakeP50MS, r.PostWakeP99MS, num(int(r.PostWakeSamples)), byTransport(r.PostWakeByTransport), num(int(r.PostWakeBeforeAck))), "p99 ≤ 50 ms")
	row("post → wake p50 / p99, from the post's sending", fmt.Sprintf("%.1f / %.1f ms", r.PostWakeFromSendP50MS, r.PostWakeFromSendP99MS), "—")
	row("tick duration p50 / p99 / max", fmt.Sprintf("%.0f / **%.0f** / %.0f ms (%d ticks)", r.TickP50MS, r.TickP99MS, r.TickMaxMS, r.Ticks), "p99 ≤ 250 ms")
	dash := fmt.Sprintf("%.0f / **%.0f ms** (%s samples)", r.DashLatencyP50MS, r.DashLatencyP99MS, num(int(r.DashSamples)))
	if r.DashEventReadP99MS > 0 {
		dash += fmt.Sprintf("; change event → its follow-up read answered p99 %.0f ms", r.DashEventReadP99MS)
	}
	row("dashboard data latency p50 / p99 (probe post → its count in the dashboard's data)", dash, "p99 ≤ 1 s")
	row("heartbeat p99 · post p99", fmt.Sprintf("%.1f ms · %.1f ms", r.HeartbeatP99MS, r.PostP99MS), "—")
	row("goroutines · connections · open files (peak)", fmt.Sprintf("%s · %s · %s", num(int(r.Goroutines)), num(int(r.Connections)), num(r.OpenFiles)), "—")
	row("dashboards: first full read p50 · data received (all dashboards) · rows on the stream", fmt.Sprintf("%.0f ms · %.1f MB/min · %.0f/min", r.DashFirstLoadP50MS, r.DashMBPerMinute, r.DashRowsPerMinute), "—")
	row("store", fmt.Sprintf("%s, growing %s/hour; %.1f writes per commit", mib(r.StoreBytes), mib(int64(r.StoreGrowthPerHour)), r.WritesPerCommit), "—")
	row("calls · errors", fmt.Sprintf("%.0f/s · %d%s", r.CallsPerSecond, r.Errors, r.errorNote()), "0 errors")
	row("hooks answered by the agent's bridge, alone or with the injection on its stream (stream agents', the whole run)", fmt.Sprintf("%.0f %%", 100*r.HooksAtBridgeShare), "—")
	row("events of the hosts, each a hook run (the whole run): notifications · stops (held) · session ends; on the agent's stream", fmt.Sprintf("%s · %s (%s) · %s; %.0f %%",
		num(int(r.Notifications)), num(int(r.Stops)), num(int(r.StopsHeld)), num(int(r.SessionEnds)), 100*r.HostOnStreamShare), "—")
	if l := r.Leak; l != nil {
		row("leak check: growth, last quarter ÷ first after warm-up", fmt.Sprintf("RSS %+.1f %% · goroutines %+.1f %% · open files %+.1f %%; store %s/h then %s/h",
			100*l.RSSGrowth, 100*l.GoroutineGrowth, 100*l.FDGrowth, mib(int64(l.StoreGrowthFirst)), mib(int64(l.StoreGrowthLast))), fmt.Sprintf("≤ %.0f %%", 100*l.Tolerance))
	}
	fmt.Fprintln(w)
}

func byTransport(m map[string][2]float64) string {
	var parts []string
	for t := range nTransports {
		if v, ok := m[transport(t).String()]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f / %.1f", transport(t), v[0], v[1]))
		}
	}
	return strings.Join(parts, ", ")
}

func (r *fleetResult) errorNote() string {
	if len(r.ErrorKinds) == 0 {
		return ""
	}
	var parts []string
	for k, v := range r.ErrorKinds {
		parts = append(parts, fmt.Sprintf("%s ×%d (%.120s)", k, v, r.lastErrs[k]))
	}
	slices.Sort(parts)
	return " — " + strings.Join(parts, "; ")
}

func (r *fleetResult) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// check fails the run past its budgets and, with the leak check, past
// the tolerated growth.
func (r *fleetResult) check() error {
	c := r.budget
	var errs []error
	if c.maxRSSPerAgentKiB > 0 && r.RSSPerAgentKiB > c.maxRSSPerAgentKiB {
		errs = append(errs, fmt.Errorf("hub RSS per agent %.0f KiB is past the budget of %.0f KiB (--max-rss-per-agent)", r.RSSPerAgentKiB, c.maxRSSPerAgentKiB))
	}
	if c.maxCPUPerAgentMinute > 0 && r.CPUPerAgentMinuteMS > ms(c.maxCPUPerAgentMinute) {
		errs = append(errs, fmt.Errorf("hub CPU per agent-minute %.2f ms is past the budget of %s (--max-cpu-per-agent-minute)", r.CPUPerAgentMinuteMS, c.maxCPUPerAgentMinute))
	}
	if l := r.Leak; l != nil {
		for _, g := range []struct {
			name string
			v    float64
		}{{"RSS", l.RSSGrowth}, {"goroutines", l.GoroutineGrowth}, {"open files", l.FDGrowth}} {
			if g.v > l.Tolerance {
				errs = append(errs, fmt.Errorf("leak check: %s grew %.1f %% after the warm-up (tolerance %.0f %%)", g.name, 100*g.v, 100*l.Tolerance))
			}
		}
	}
	return errors.Join(errs...)
}
