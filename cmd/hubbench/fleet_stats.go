package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/status"
)

// latHist is a latency histogram: buckets 2 % apart from 1 µs to about
// two minutes, so quantiles are within 2 % in constant memory, and
// histograms add up.
type latHist struct {
	b   [histBuckets]uint32
	n   int64
	max time.Duration
}

const (
	histBuckets = 950
	histGrowth  = 1.02
	histMin     = time.Microsecond
)

func histBucket(d time.Duration) int {
	if d <= histMin {
		return 0
	}
	i := int(math.Log(float64(d)/float64(histMin))/math.Log(histGrowth)) + 1
	return min(i, histBuckets-1)
}

func (h *latHist) add(d time.Duration) {
	h.b[histBucket(d)]++
	h.n++
	h.max = max(h.max, d)
}

func (h *latHist) merge(o *latHist) {
	for i, c := range o.b {
		h.b[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the upper edge of the bucket holding the q-quantile
// (nearest rank), never above the largest sample (the last bucket has no
// edge: the largest sample); 0 if empty.
func (h *latHist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := max(1, int64(math.Ceil(q*float64(h.n))))
	var seen int64
	for i, c := range h.b {
		seen += int64(c)
		if seen >= rank {
			if i == histBuckets-1 {
				return h.max
			}
			edge := time.Duration(float64(histMin) * math.Pow(histGrowth, float64(i)))
			return min(edge, h.max)
		}
	}
	return h.max
}

// recorder keeps one histogram per report interval.
type recorder struct {
	mu   sync.Mutex
	cur  latHist
	done []*latHist
}

func (r *recorder) add(d time.Duration) {
	r.mu.Lock()
	r.cur.add(d)
	r.mu.Unlock()
}

// rotate closes the current interval and returns its histogram.
func (r *recorder) rotate() *latHist {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.cur
	r.cur = latHist{}
	r.done = append(r.done, &h)
	return &h
}

// from returns the intervals from index i on, merged.
func (r *recorder) from(i int) *latHist {
	r.mu.Lock()
	defer r.mu.Unlock()
	var h latHist
	for _, x := range r.done[min(i, len(r.done)):] {
		h.merge(x)
	}
	return &h
}

// wakeMatcher pairs each post's acknowledgement with the wait replies
// that carry the message: the post → wake latency of its recipients.
type wakeMatcher struct {
	mu       sync.Mutex
	acked    map[string]postTimes
	early    map[string][]earlyWake // replies seen before their post's acknowledgement
	lat      [nTransports]recorder  // from the post's acknowledgement
	fromSend recorder               // from the post's sending: its own latency included
	before   atomic.Int64           // replies that came before the post's own reply (0 from the acknowledgement)
}

// postTimes is when a post was sent and when its acknowledgement came.
type postTimes struct{ sent, ack time.Time }

type earlyWake struct {
	at time.Time
	t  transport
}

func newWakeMatcher() *wakeMatcher {
	return &wakeMatcher{acked: map[string]postTimes{}, early: map[string][]earlyWake{}}
}

func (m *wakeMatcher) posted(id string, sent, ack time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acked[id] = postTimes{sent: sent, ack: ack}
	for _, e := range m.early[id] {
		m.lat[e.t].add(0)
		m.fromSend.add(e.at.Sub(sent))
		m.before.Add(1)
	}
	delete(m.early, id)
}

// woke records a wait reply received at at, for a wait issued at issued:
// a message posted before the wait was issued was waiting, not a wake.
func (m *wakeMatcher) woke(ids []string, issued, at time.Time, t transport) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		p, ok := m.acked[id]
		switch {
		case !ok:
			m.early[id] = append(m.early[id], earlyWake{at: at, t: t})
		case p.ack.Before(issued):
		default:
			m.lat[t].add(at.Sub(p.ack))
			m.fromSend.add(at.Sub(p.sent))
		}
	}
}

// sweep forgets posts acknowledged, and early replies seen, before t:
// their recipients were not parked, or were not ours (nudges, pulses).
func (m *wakeMatcher) sweep(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, p := range m.acked {
		if p.ack.Before(t) {
			delete(m.acked, id)
		}
	}
	for id, es := range m.early {
		if len(es) > 0 && es[0].at.Before(t) {
			delete(m.early, id)
		}
	}
}

// probeMatcher times, per dashboard, how long the probe's unread count
// takes to show each probe post.
type probeMatcher struct {
	mu    sync.Mutex
	acked map[int64]time.Time
	lat   recorder
}

func (p *probeMatcher) posted(n int64, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acked[n] = at
	delete(p.acked, n-1000)
}

// seen records that a dashboard whose data showed count before (-1: not
// yet, since it connected) now shows count; it returns the count to
// remember. The first sight is a baseline, not a change.
func (p *probeMatcher) seen(before, count int64, at time.Time) int64 {
	if before < 0 || count <= before {
		return max(before, count)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for n := before + 1; n <= count; n++ {
		if ack, ok := p.acked[n]; ok {
			p.lat.add(max(0, at.Sub(ack)))
		}
	}
	return count
}

// fleetStats collects the run's figures.
type fleetStats struct {
	f     *fleet
	start time.Time

	ok, errs  [nOps]atomic.Int64
	errMu     sync.Mutex
	errKinds  map[string]int64 // "op: code" → count
	lastErr   map[string]string
	heartbeat recorder
	post      recorder
	wakes     *wakeMatcher
	probe     *probeMatcher
	ticks     recorder
	eventRead recorder // old page: change event → its follow-up read answered
	firstLoad recorder // a dashboard's first full read of the agents
	dashRows  atomic.Int64
	dashBytes atomic.Int64
	// stopsHeld counts the stops the hub held; hostOnStream the hook runs
	// of the host's events whose calls went on the agent's stream.
	stopsHeld, hostOnStream atomic.Int64
	missTicks               int64

	intervals []*interval
}

func newFleetStats(f *fleet, start time.Time) *fleetStats {
	return &fleetStats{f: f, start: start, wakes: newWakeMatcher(), probe: &probeMatcher{acked: map[int64]time.Time{}},
		errKinds: map[string]int64{}, lastErr: map[string]string{}}
}

// call counts one call of kind o; lat > 0 is recorded for the kinds
// whose latency is reported.
func (s *fleetStats) call(o op, lat time.Duration, err error) {
	if err != nil {
		s.errs[o].Add(1)
		kind := opNames[o] + ": " + status.Code(err).String()
		s.errMu.Lock()
		s.errKinds[kind]++
		s.lastErr[kind] = err.Error()
		s.errMu.Unlock()
		return
	}
	s.ok[o].Add(1)
	switch {
	case lat <= 0:
	case o == opHeartbeat:
		s.heartbeat.add(lat)
	case o == opPost:
		s.post.add(lat)
	}
}

// interval is one report interval's figures.
type interval struct {
	end                time.Time
	warm               bool // within the warm-up
	hubCPU             float64
	load               cpuLoad // hub · hubbench · other processes
	rssKiB             int64
	goroutines         float64
	conns              float64
	fds                int
	storeBytes         int64
	writesPerCommit    float64
	calls, errs        int64
	wake               [nTransports]*latHist
	wakeFromSend       *latHist
	heartbeat, ticks   *latHist
	dash, eventRead    *latHist
	dashRows, dashByte int64
}

// sample polls the hub's tick statistics every second and closes a report
// interval every reportEvery, until d has passed or ctx ends.
func (s *fleetStats) sample(ctx context.Context, d time.Duration) error {
	h, c := s.f.hub, s.f.c
	end := s.start.Add(d)
	nextReport := s.start.Add(c.reportEvery)
	lastTicks := int64(-1)
	cpu0, _ := procCPU(strconv.Itoa(h.pid))
	meter := startCPU(h)
	batches0, writes0, _ := h.writeBatches(ctx)
	var calls0, errs0 int64
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := s.f.admin.hubInfo(cctx)
		cancel()
		if err == nil {
			if lastTicks >= 0 && info.GetTicks() > lastTicks {
				s.ticks.add(time.Duration(info.GetLastTickMicros()) * time.Microsecond)
				s.missTicks += info.GetTicks() - lastTicks - 1
			}
			lastTicks = info.GetTicks()
		}
		now := time.Now()
		if now.Before(nextReport) && now.Before(end) {
			continue
		}
		iv := &interval{end: now, warm: now.Sub(s.start) <= c.warmup+time.Second, load: meter.stop(h)}
		meter = startCPU(h)
		st, err := h.sample(ctx, "")
		if err != nil {
			return err
		}
		cpu1 := st.cpu
		iv.hubCPU = (cpu1 - cpu0).Seconds() / now.Sub(s.lastEnd()).Seconds()
		cpu0 = cpu1
		iv.rssKiB = st.rssKiB
		iv.goroutines, _ = scrapeMetric(ctx, h.metricsURL(), "go_goroutines")
		iv.conns, _ = scrapeMetric(ctx, h.metricsURL(), "hub_connections_open")
		iv.fds = countFDs(h.pid)
		iv.storeBytes = storeSize(h.dataDir)
		if b1, w1, ok := h.writeBatches(ctx); ok && b1 > batches0 {
			iv.writesPerCommit = (w1 - writes0) / (b1 - batches0)
			batches0, writes0 = b1, w1
		}
		var calls, errs int64
		for o := range nOps {
			if o == opHookBridge { // answered without the hub
				continue
			}
			calls += s.ok[o].Load()
			errs += s.errs[o].Load()
		}
		iv.calls, iv.errs = calls-calls0, errs-errs0
		calls0, errs0 = calls, errs
		for tr := range nTransports {
			iv.wake[tr] = s.wakes.lat[tr].rotate()
		}
		iv.heartbeat, iv.ticks = s.heartbeat.rotate(), s.ticks.rotate()
		iv.wakeFromSend = s.wakes.fromSend.rotate()
		s.post.rotate()
		iv.dash, iv.eventRead = s.probe.lat.rotate(), s.eventRead.rotate()
		iv.dashRows, iv.dashByte = s.dashRows.Swap(0), s.dashBytes.Swap(0)
		s.intervals = append(s.intervals, iv)
		s.wakes.sweep(now.Add(-2 * time.Minute))
		s.f.progress("%s", s.line(iv))
		if !now.Before(end) {
			return nil
		}
		nextReport = nextReport.Add(c.reportEvery)
	}
}

func (s *fleetStats) lastEnd() time.Time {
	if len(s.intervals) == 0 {
		return s.start
	}
	return s.intervals[len(s.intervals)-1].end
}

// countFDs returns the number of open file descriptors of pid.
func countFDs(pid int) int {
	es, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return 0
	}
	return len(es)
}

// storeSize returns the bytes of the SQLite store in dataDir (the
// database, its log and index), 0 on PostgreSQL.
func storeSize(dataDir string) int64 {
	es, err := os.ReadDir(dataDir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range es {
		if !strings.Contains(e.Name(), ".db") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dataDir, e.Name())); err == nil {
			n += fi.Size()
		}
	}
	return n
}
