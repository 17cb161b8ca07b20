package hub

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// What each agent spends: the hosts (Claude Code, Codex, Gemini CLI)
// export their own telemetry over OTLP to the hub, which maps it to usage
// (internal/usage) and keeps it summed per agent, minute (and UTC day),
// the task the agent held at the time and the model. Raw events are not
// kept; the minutes are kept for the usage retention, the days longer.

// UsageCounts are what a host reports of its requests to a model. Input
// counts the input tokens not read from the cache; CacheRead and
// CacheCreation the cached ones; CostUSD is the cost as the host reports
// it (0 when it reports none).
type UsageCounts struct {
	Input, Output, CacheRead, CacheCreation, Requests int64
	CostUSD                                           float64
}

// Add adds o to c.
func (c *UsageCounts) Add(o UsageCounts) {
	c.Input += o.Input
	c.Output += o.Output
	c.CacheRead += o.CacheRead
	c.CacheCreation += o.CacheCreation
	c.Requests += o.Requests
	c.CostUSD += o.CostUSD
}

// IsZero reports whether c counts nothing.
func (c UsageCounts) IsZero() bool { return c == UsageCounts{} }

// Tokens is every token c counts.
func (c UsageCounts) Tokens() int64 { return c.Input + c.Output + c.CacheRead + c.CacheCreation }

// UsageDelta is usage an agent's host reported since its last export: at
// At, with Model.
type UsageDelta struct {
	At     time.Time
	Model  string
	Counts UsageCounts
}

// UsageRollup is one row of usage kept: an agent's usage in one minute or
// one UTC day (At, its start), while it held task TaskID (0: none), with
// one model.
type UsageRollup struct {
	AgentID int64
	Project string
	At      time.Time
	TaskID  int64
	Model   string
	Counts  UsageCounts
}

// usageSkew is how far from the hub's clock a reported time may lie
// before the report is counted at the hub's time instead: a host's clock
// that is off, or a figure resent long after, still counts, in the
// minute it arrived.
const usageSkew = 24 * time.Hour

// usageRollups sums deltas into the minute and day rows of one agent
// holding task taskID at now: times outside usageSkew of now, or in the
// future by more than a minute, count at now.
func usageRollups(agentID int64, project string, taskID int64, deltas []UsageDelta, now time.Time) (minutes, days []UsageRollup) {
	type key struct {
		at    int64
		model string
	}
	var mi, di = map[key]int{}, map[key]int{}
	for _, d := range deltas {
		if d.Counts.IsZero() {
			continue
		}
		at := d.At
		if at.IsZero() || at.Before(now.Add(-usageSkew)) || at.After(now.Add(time.Minute)) {
			at = now
		}
		at = at.UTC()
		m := at.Truncate(time.Minute)
		day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
		add := func(rows *[]UsageRollup, idx map[key]int, t time.Time) {
			k := key{t.Unix(), d.Model}
			i, ok := idx[k]
			if !ok {
				i = len(*rows)
				idx[k] = i
				*rows = append(*rows, UsageRollup{AgentID: agentID, Project: project, At: t, TaskID: taskID, Model: d.Model})
			}
			(*rows)[i].Counts.Add(d.Counts)
		}
		add(&minutes, mi, m)
		add(&days, di, day)
	}
	return minutes, days
}

// UsageGroup is a field usage is grouped by.
type UsageGroup string

// The fields usage can be grouped by.
const (
	UsageByAgent   UsageGroup = "agent"
	UsageByProject UsageGroup = "project"
	UsageByTask    UsageGroup = "task"
	UsageByModel   UsageGroup = "model"
	UsageByDay     UsageGroup = "day"
	UsageByHour    UsageGroup = "hour" // from the minutes: a span they still hold
)

// ParseUsageGroups reads a group_by value: fields among agent, project,
// task, model, day and hour, separated by commas ("" is agent). Errors:
// EINVALID.
func ParseUsageGroups(s string) ([]UsageGroup, error) {
	if strings.TrimSpace(s) == "" {
		return []UsageGroup{UsageByAgent}, nil
	}
	var gs []UsageGroup
	seen := map[UsageGroup]bool{}
	for _, f := range strings.Split(s, ",") {
		g := UsageGroup(strings.TrimSpace(f))
		switch g {
		case UsageByAgent, UsageByProject, UsageByTask, UsageByModel, UsageByDay, UsageByHour:
		default:
			return nil, Errorf(EINVALID, "group_by %q: %q is not a field to group usage by; expected agent, project, task, model, day or hour, several separated by commas", s, f)
		}
		if !seen[g] {
			seen[g] = true
			gs = append(gs, g)
		}
	}
	return gs, nil
}

// UsageQuery is a report of usage: summed over [Since, Until), grouped by
// GroupBy, of one agent when AgentID is set.
type UsageQuery struct {
	GroupBy      []UsageGroup
	Since, Until time.Time
	AgentID      int64
	// Agent names the agent when AgentID is not set ("": every agent).
	Agent string
	// Days reads the day rows (whole UTC days) rather than the minutes.
	Days bool
	// Projects, when set, keeps only the usage of agents of these
	// projects (what a person sees).
	Projects []string
	// Max bounds the rows (0: no bound).
	Max int
}

// UsageReportMax bounds the rows of a report grouped by more than the
// agent: one grouped by the agent alone has a row per agent, every one.
const UsageReportMax = 5000

// UsageRow is one group of a usage report: the fields grouped by, set,
// the others zero.
type UsageRow struct {
	Agent     string
	Project   string
	TaskID    int64
	TaskTitle string
	Model     string
	Day       time.Time
	Hour      time.Time
	Counts    UsageCounts
}

// usageDefaultSpan is the span of a report given no since: the last day.
const usageDefaultSpan = 24 * time.Hour

// planUsageQuery checks a report's span and decides which rows serve it
// (grouped by agent unless it says otherwise):
// since defaults to a day before until, until to now; the minutes serve a
// span they still hold (since after now - keepMinutes, or keepMinutes 0:
// kept for ever), the days any other, since rounded down to its UTC day;
// the days also serve a span of whole UTC days (since at a day's start,
// until at one or not before now: today so far is its day's row, however
// many minutes it holds); usage by hour only from the minutes. A report
// grouped by the agent alone has every agent's row, any other at most
// UsageReportMax.
// Errors: EINVALID.
func planUsageQuery(q UsageQuery, now time.Time, keepMinutes time.Duration) (UsageQuery, error) {
	if len(q.GroupBy) == 0 {
		q.GroupBy = []UsageGroup{UsageByAgent}
	}
	if q.Until.IsZero() {
		q.Until = now
	}
	if q.Since.IsZero() {
		q.Since = q.Until.Add(-usageDefaultSpan)
	}
	if !q.Since.Before(q.Until) {
		return q, Errorf(EINVALID, "since %s is not before until %s: give a span of time (RFC 3339)", q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339))
	}
	if keepMinutes > 0 && q.Since.Before(now.Add(-keepMinutes)) {
		if slices.Contains(q.GroupBy, UsageByHour) {
			return q, Errorf(EINVALID, "since %s is before the minutes kept (%s): usage by hour is there for the last %s; give a later since, or group by day", q.Since.Format(time.RFC3339), now.Add(-keepMinutes).Format(time.RFC3339), keepMinutes)
		}
		q.Days = true
		s := q.Since.UTC()
		q.Since = time.Date(s.Year(), s.Month(), s.Day(), 0, 0, 0, 0, time.UTC)
	}
	if !slices.Contains(q.GroupBy, UsageByHour) && dayStart(q.Since) && (dayStart(q.Until) || !q.Until.Before(now)) {
		q.Days = true
	}
	if !slices.Equal(q.GroupBy, []UsageGroup{UsageByAgent}) {
		q.Max = UsageReportMax
	}
	return q, nil
}

// dayStart reports whether t is the start of a UTC day.
func dayStart(t time.Time) bool {
	u := t.UTC()
	return u.Equal(time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC))
}

// UsageRetention is how long usage is kept: the minutes (0: for ever), and
// the days (0: for ever).
type UsageRetention struct {
	Minutes, Days time.Duration
}

// DefaultUsageRetention keeps the minutes a week and the days 400 days.
var DefaultUsageRetention = UsageRetention{Minutes: 7 * 24 * time.Hour, Days: 400 * 24 * time.Hour}

// RateLimitPause is how long an agent counts as rate limited after its
// host reported an API error of rate limiting or overload without saying
// when the limit resets: each new report extends it.
const RateLimitPause = time.Minute

// rateLimitUntil decides until when an agent whose host reported rate
// limiting at at is held: reset when the host said when, else at +
// RateLimitPause.
func rateLimitUntil(at, reset time.Time) time.Time {
	if reset.After(at) {
		return reset
	}
	return at.Add(RateLimitPause)
}

// rateLimits are the agents held by their hosts' rate limits, in memory
// (a restarted hub forgets them: the host's next report holds the agent
// again).
type rateLimits struct {
	mu   sync.Mutex
	held map[int64]time.Time
}

// hold holds agentID until t (a later hold wins).
func (r *rateLimits) hold(agentID int64, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.After(r.held[agentID]) {
		r.held[agentID] = t
	}
}

// until returns until when agentID is held at now, the zero time when it
// is not.
func (r *rateLimits) until(agentID int64, now time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.held[agentID]
	if !ok {
		return time.Time{}
	}
	if !t.After(now) {
		delete(r.held, agentID)
		return time.Time{}
	}
	return t
}
