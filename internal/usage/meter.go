package usage

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenthub/hub/internal/hub"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metrics "go.opentelemetry.io/proto/otlp/metrics/v1"
)

// Report is what one export says of an agent: the usage it adds, the
// latest API error of rate limiting it reports (zero: none), and the
// latest tool result or decision (zero: none, or one within
// ToolActivityEvery of the last reported) with what the tools were
// (Tools: one line, bounded, of names the hub's own characters).
type Report struct {
	Deltas      []hub.UsageDelta
	RateLimited time.Time
	ToolActive  time.Time
	Tools       string
}

// ToolActivityEvery is how often at most an agent's tool results are
// reported as its activity: a host running many tools a minute costs the
// hub one write a minute.
const ToolActivityEvery = time.Minute

// Bounds of what a Meter remembers per agent: past them, the entries an
// export touched least recently are forgotten (a cumulative series
// forgotten counts again from its start when it comes back: rare, as a
// host's series are few).
const (
	maxSeries   = 1024
	maxSessions = 256
)

// Meter remembers, per agent, the last point of each metric series and
// of each session's events, and which sessions sent events, so that each
// export adds only what is new. Safe for concurrent use. What it
// remembers is in memory: a restarted hub counts a cumulative series
// again from its start.
type Meter struct {
	mu     sync.Mutex
	agents map[int64]*agentMeter
}

// NewMeter returns an empty Meter.
func NewMeter() *Meter { return &Meter{agents: map[int64]*agentMeter{}} }

type agentMeter struct {
	tick     int64 // exports seen, the clock of the least recently used
	series   map[string]*seriesState
	sessions map[string]*sessionState
	toolAt   time.Time // the tool activity last reported (the host's time)
}

// seriesState is the last point of one metric series.
type seriesState struct {
	start, time uint64  // the point's start and time (Unix ns)
	value       float64 // a cumulative point's value (a histogram's sum)
	count       uint64  // a cumulative histogram's count
	used        int64
}

// sessionState is the last event counted of one session (by time, then
// its event.sequence when the host numbers them), whether the session
// sends usage events at all, and what its metrics counted before its
// first event arrived (a host exports its metrics and its events apart,
// the metrics often first: Claude Code's every second in a short run,
// its events in batches), taken back when that event comes.
type sessionState struct {
	time    uint64
	seq     int64
	events  bool
	used    int64
	counted map[countedKey]hub.UsageCounts
}

// countedKey is what metrics counted of a session falls under: the
// model and the minute, so that taking it back lands in the rollup row
// that holds it.
type countedKey struct {
	model  string
	minute int64 // Unix seconds
}

// maxCounted bounds what a session remembers of its metrics' counts
// (they run only until its first event: a few minutes at most).
const maxCounted = 32

// negated is c with every count negated: what takes c back from the
// rollup that holds it.
func negated(c hub.UsageCounts) hub.UsageCounts {
	return hub.UsageCounts{Input: -c.Input, Output: -c.Output, CacheRead: -c.CacheRead, CacheCreation: -c.CacheCreation,
		Requests: -c.Requests, CostUSD: -c.CostUSD}
}

// noteCounted remembers that metrics counted c of the session at t.
func (s *sessionState) noteCounted(model string, t time.Time, c hub.UsageCounts) {
	k := countedKey{model, t.Truncate(time.Minute).Unix()}
	if s.counted == nil {
		s.counted = map[countedKey]hub.UsageCounts{}
	}
	prev, ok := s.counted[k]
	if !ok && len(s.counted) >= maxCounted {
		return
	}
	prev.Add(c)
	s.counted[k] = prev
}

// takeBack appends to rep what the session's metrics counted, negated,
// and forgets it: its events count instead.
func (s *sessionState) takeBack(rep *Report) {
	for k, c := range s.counted {
		rep.Deltas = append(rep.Deltas, hub.UsageDelta{At: time.Unix(k.minute, 0), Model: k.model, Counts: negated(c)})
	}
	s.counted = nil
}

func (m *Meter) agent(id int64) *agentMeter {
	a := m.agents[id]
	if a == nil {
		a = &agentMeter{series: map[string]*seriesState{}, sessions: map[string]*sessionState{}}
		m.agents[id] = a
	}
	a.tick++
	return a
}

// trim forgets the least recently used half of a map past its bound.
func trim[V any](mp map[string]V, bound int, used func(V) int64) {
	if len(mp) <= bound {
		return
	}
	keys := make([]string, 0, len(mp))
	for k := range mp {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int { return cmp.Compare(used(mp[x]), used(mp[y])) })
	for _, k := range keys[:len(keys)-bound/2] {
		delete(mp, k)
	}
}

func (a *agentMeter) session(id string) *sessionState {
	s := a.sessions[id]
	if s == nil {
		s = &sessionState{}
		a.sessions[id] = s
	}
	s.used = a.tick
	return s
}

// eventsCount reports whether the events of session sid count its usage
// rather than its metrics: it sends usage events, or, for a metric point
// that names no session, a session of the agent does.
func (a *agentMeter) eventsCount(sid string) bool {
	if sid == "" {
		return a.anyEvents()
	}
	s := a.sessions[sid]
	if s == nil {
		return false
	}
	s.used = a.tick
	return s.events
}

// anyEvents reports whether a session of the agent sends events.
func (a *agentMeter) anyEvents() bool {
	for _, s := range a.sessions {
		if s.events {
			return true
		}
	}
	return false
}

func unixNano(ns uint64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(ns))
}

// eventSessions are an agent's sessions whose events count their usage,
// as the Meter knew them at one moment (Meter.eventSessions), and those
// of them an export's data points named (seen).
type eventSessions struct {
	ids, seen []string
}

// none reports whether no session of the agent sends events.
func (e *eventSessions) none() bool { return e == nil || len(e.ids) == 0 }

// byEvents reports whether the events of session sid count its usage
// rather than its metrics, as agentMeter.eventsCount does.
func (e *eventSessions) byEvents(sid string) bool {
	if sid == "" {
		return !e.none()
	}
	if e == nil || !slices.Contains(e.ids, sid) {
		return false
	}
	if !slices.Contains(e.seen, sid) {
		e.seen = append(e.seen, sid)
	}
	return true
}

// eventSessions returns agentID's sessions whose events count their
// usage (nil: none yet): what pruneMetrics passes over.
func (m *Meter) eventSessions(agentID int64) *eventSessions {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[agentID]
	if a == nil {
		return nil
	}
	var e eventSessions
	for id, s := range a.sessions {
		if s.events {
			e.ids = append(e.ids, id)
		}
	}
	return &e
}

// Metrics reads an export of metrics from agentID's host.
func (m *Meter) Metrics(agentID int64, req *colmetrics.ExportMetricsServiceRequest) Report {
	return m.metrics(agentID, req, nil)
}

// metrics is Metrics of an export pruned of the data points of pruned's
// sessions (pruneMetrics): those are remembered as used, as the points
// would have made them.
func (m *Meter) metrics(agentID int64, req *colmetrics.ExportMetricsServiceRequest, pruned *eventSessions) Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agent(agentID)
	if pruned != nil {
		for _, sid := range pruned.seen {
			if s := a.sessions[sid]; s != nil {
				s.used = a.tick
			}
		}
	}
	var rep Report
	for _, rm := range req.GetResourceMetrics() {
		res := merge(nil, rm.GetResource().GetAttributes())
		host := knownHost(res.str("service.name"))
		for _, sm := range rm.GetScopeMetrics() {
			for _, mt := range sm.GetMetrics() {
				host = host || knownMetric(mt.GetName())
			}
		}
		for _, sm := range rm.GetScopeMetrics() {
			for _, mt := range sm.GetMetrics() {
				if host && strings.HasPrefix(mt.GetName(), "gen_ai.") {
					continue
				}
				a.metric(mt, res, &rep)
			}
		}
	}
	trim(a.series, maxSeries, func(s *seriesState) int64 { return s.used })
	trim(a.sessions, maxSessions, func(s *sessionState) int64 { return s.used })
	return rep
}

// point is one data point as metric reads it.
type point struct {
	at         attrs
	start, t   uint64
	value      float64
	count      uint64
	cumulative bool
}

func (a *agentMeter) metric(mt *metrics.Metric, res attrs, rep *Report) {
	var pts []point
	switch d := mt.GetData().(type) {
	case *metrics.Metric_Sum:
		cum := d.Sum.GetAggregationTemporality() == metrics.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
		for _, p := range d.Sum.GetDataPoints() {
			v := p.GetAsDouble()
			if x, ok := p.GetValue().(*metrics.NumberDataPoint_AsInt); ok {
				v = float64(x.AsInt)
			}
			pts = append(pts, point{merge(res, p.GetAttributes()), p.GetStartTimeUnixNano(), p.GetTimeUnixNano(), v, 0, cum})
		}
	case *metrics.Metric_Histogram:
		cum := d.Histogram.GetAggregationTemporality() == metrics.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
		for _, p := range d.Histogram.GetDataPoints() {
			pts = append(pts, point{merge(res, p.GetAttributes()), p.GetStartTimeUnixNano(), p.GetTimeUnixNano(), p.GetSum(), p.GetCount(), cum})
		}
	default:
		return
	}
	for _, p := range pts {
		rule, ok := metricRule(mt.GetName(), p.at)
		if !ok {
			continue
		}
		// Events win: a session that sends usage events is counted by
		// them, its metrics not, and its series need no state.
		sid := p.at.session()
		if a.eventsCount(sid) {
			continue
		}
		value, count, fresh := a.delta(mt.GetName(), p)
		if !fresh || value < 0 {
			continue
		}
		var c hub.UsageCounts
		rule.add(&c, value)
		if rule.requestCount {
			c.Requests += int64(count)
		}
		if !c.IsZero() {
			d := hub.UsageDelta{At: unixNano(p.t), Model: p.at.model(), Counts: c}
			rep.Deltas = append(rep.Deltas, d)
			a.session(sid).noteCounted(d.Model, d.At, c)
		}
	}
}

// delta returns what point p of metric name adds to its series since the
// series' last point, and records p: fresh is false for a point not newer
// than the last (an export resent). A cumulative series whose start moved
// or whose value fell was restarted: its value counts whole.
func (a *agentMeter) delta(name string, p point) (value float64, count uint64, fresh bool) {
	key := seriesKey(name, p.at)
	s := a.series[key]
	if s == nil {
		s = &seriesState{}
		a.series[key] = s
	} else if p.t != 0 && p.t <= s.time {
		s.used = a.tick
		return 0, 0, false
	}
	s.used = a.tick
	value, count = p.value, p.count
	if p.cumulative {
		if s.time != 0 && p.start == s.start && p.value >= s.value && p.count >= s.count {
			value, count = p.value-s.value, p.count-s.count
		}
		s.value, s.count = p.value, p.count
	}
	s.start, s.time = p.start, p.t
	return value, count, true
}

// seriesKey names a metric's series: its name and attributes.
func seriesKey(name string, a attrs) string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("\x00")
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(a.str(k))
	}
	return b.String()
}

// event is one log record as Logs reads it.
type event struct {
	kind    eventKind
	session string
	model   string
	t       uint64
	seq     int64
	counts  hub.UsageCounts
	tool    string // a tool event's tool, as toolName says it
}

// Logs reads an export of log events from agentID's host.
func (m *Meter) Logs(agentID int64, req *collogs.ExportLogsServiceRequest) Report {
	var evs []event
	for _, rl := range req.GetResourceLogs() {
		res := merge(nil, rl.GetResource().GetAttributes())
		service := res.str("service.name")
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				at := merge(res, lr.GetAttributes())
				kind, c := eventRule(eventName(service, lr.GetEventName(), at, lr.GetBody().GetStringValue()), at)
				if kind == eventNone {
					continue
				}
				t := lr.GetTimeUnixNano()
				if t == 0 {
					t = lr.GetObservedTimeUnixNano()
				}
				var tool string
				if kind == eventTool {
					tool = toolName(at)
				}
				evs = append(evs, event{kind, at.session(), at.model(), t, at.count("event.sequence"), c, tool})
			}
		}
	}
	// By session, in the order the host made them, so that what a
	// session reported before is told apart from what is new.
	slices.SortStableFunc(evs, func(x, y event) int {
		return cmp.Or(strings.Compare(x.session, y.session), cmp.Compare(x.t, y.t), cmp.Compare(x.seq, y.seq))
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agent(agentID)
	var rep Report
	var tools toolList
	for _, e := range evs {
		switch e.kind {
		case eventRateLimit:
			rep.RateLimited = later(rep.RateLimited, unixNano(e.t))
		case eventTool:
			rep.ToolActive = later(rep.ToolActive, unixNano(e.t))
			tools.add(e.tool)
		case eventUsage:
			s := a.session(e.session)
			if !s.events {
				// The session's first event: what its metrics counted,
				// and what metrics naming no session did, is taken back.
				s.takeBack(&rep)
				if e.session != "" {
					a.session("").takeBack(&rep)
				}
			}
			s.events = true
			if e.t != 0 && (e.t < s.time || (e.t == s.time && e.seq <= s.seq)) {
				continue // counted before: the export is resent
			}
			s.time, s.seq = e.t, e.seq
			if !e.counts.IsZero() {
				rep.Deltas = append(rep.Deltas, hub.UsageDelta{At: unixNano(e.t), Model: e.model, Counts: e.counts})
			}
		}
	}
	if !rep.ToolActive.IsZero() {
		if !a.toolAt.IsZero() && rep.ToolActive.Before(a.toolAt.Add(ToolActivityEvery)) {
			rep.ToolActive = time.Time{} // reported within the minute
		} else {
			a.toolAt, rep.Tools = rep.ToolActive, tools.String()
		}
	}
	trim(a.sessions, maxSessions, func(s *sessionState) int64 { return s.used })
	return rep
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
