package hub

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
)

// Cron jobs (SPEC's CronService): scheduled messages to an agent or a
// channel. Three kinds: "at" (once, at an RFC 3339 time), "every" (a fixed
// period aligned to an anchor) and "cron" (a 5-field expression in the hub's
// time zone, parsed by robfig/cron/v3's standard parser).

// Cron job kinds.
const (
	CronAt    = "at"
	CronEvery = "every"
	CronCron  = "cron"
)

// Cron run statuses.
const (
	CronRunOK    = "ok"
	CronRunError = "error"
)

// Cron limits and policies.
const (
	// MaxCronConsecutiveErrors failed runs in a row disable a job.
	MaxCronConsecutiveErrors = 5
	// MaxCronEvery is the longest "every" period (about ten years).
	MaxCronEvery = int64(10 * 366 * 24 * 3600)
)

// targetNamePattern is the shape of agent and channel names a job or pulse
// may address (the agent name rule of SPEC §2).
const targetNamePattern = `^[a-z0-9][a-z0-9._-]{0,62}$`

// The name patterns are compiled at their first use, not at the start of
// every process that links the package (a bounded repetition compiles to
// thousands of instructions: most of the package's initialisation, paid by
// every hub hook and hub guard run).
var (
	targetAgentRE   = lazyRegexp(targetNamePattern)
	targetChannelRE = lazyRegexp(`^#[a-z0-9][a-z0-9._-]{0,62}$`)
	cronJobNameRE   = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	cronParser      = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
)

// CronJob is a scheduled message.
type CronJob struct {
	ID                int64
	Name              string    // unique, [A-Za-z0-9][A-Za-z0-9._-]{0,63}
	Kind              string    // CronAt, CronEvery or CronCron
	At                time.Time // CronAt: the one fire time
	EverySeconds      int64     // CronEvery: the period
	Anchor            time.Time // CronEvery: fire times are Anchor + k*period
	Expr              string    // CronCron: 5-field expression or @descriptor
	Project           string    // the project its target is in (DefaultProject if empty)
	Target            string    // agent name or "#channel"
	Message           string    // the message posted at each run
	Enabled           bool
	ConsecutiveErrors int
	NextRunAt         time.Time // zero: nothing scheduled (an `at` in the past or already run)
	LastRunAt         time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// CronRun is one recorded execution of a job.
type CronRun struct {
	ID          int64
	JobID       int64
	JobName     string
	ScheduledAt time.Time // the slot it ran for (RanAt for a manual run)
	RanAt       time.Time
	Status      string // CronRunOK or CronRunError
	Error       string
	Duration    time.Duration
	Manual      bool // started by `hubctl cron run`, not by the schedule
}

// IsChannelTarget reports whether a job target names a channel ("#name").
func IsChannelTarget(target string) bool { return strings.HasPrefix(target, "#") }

// ParseCronExpr parses a cron expression with the standard 5-field parser
// (minute hour day-of-month month day-of-week, or a descriptor such as
// @daily). It returns EINVALID carrying the parser's reason. Time zone
// prefixes and @every are refused: jobs run in the hub's zone, and a fixed
// period is the "every" kind, which is anchored.
func ParseCronExpr(expr string) (cron.Schedule, error) {
	e := strings.TrimSpace(expr)
	bad := func(why string) (cron.Schedule, error) {
		return nil, Errorf(EINVALID, "cron expression %q: %s; expected 5 fields \"minute hour day-of-month month day-of-week\" such as \"0 9 * * 1-5\", or @hourly/@daily/@weekly/@monthly/@yearly", expr, why)
	}
	switch {
	case e == "":
		return bad("empty")
	case strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ="):
		return bad("time zone prefixes are not accepted, jobs run in the hub's time zone")
	case strings.HasPrefix(e, "@every"):
		return bad("@every is not accepted, use the \"every\" kind")
	}
	if !strings.HasPrefix(e, "@") {
		if n := len(strings.Fields(e)); n != 5 {
			return bad(fmt.Sprintf("%d fields", n))
		}
	}
	sched, err := parseCron(e)
	if err != nil {
		return bad(err.Error())
	}
	return sched, nil
}

// parseCron calls the parser, turning a panic on odd input into an error.
func parseCron(e string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("unparsable: %v", r)
		}
	}()
	return cronParser.Parse(e)
}

// PrepareCronJob validates a new job at now, fills its defaults (the kind
// of a job given without one, from its one schedule field; CreatedAt,
// UpdatedAt; an "every" job without an anchor is anchored at now truncated
// to the second) and computes NextRunAt in loc. It returns EINVALID naming
// what is wrong. notice is non-empty when the job is accepted but will never
// run (an "at" time not in the future): callers show it to the user.
func PrepareCronJob(j CronJob, now time.Time, loc *time.Location) (_ CronJob, notice string, err error) {
	j.Name = strings.TrimSpace(j.Name)
	j.Target = strings.TrimSpace(j.Target)
	j.Expr = strings.TrimSpace(j.Expr)
	if j.Kind == "" {
		if j.Kind, err = inferCronKind(j); err != nil {
			return CronJob{}, "", err
		}
	}
	if j.CreatedAt.IsZero() {
		j.CreatedAt = now
	}
	j.UpdatedAt = now
	if j.Kind == CronEvery && j.Anchor.IsZero() {
		j.Anchor = now.Truncate(time.Second)
	}
	if err := j.Validate(); err != nil {
		return CronJob{}, "", err
	}
	j.ConsecutiveErrors = 0
	j.NextRunAt = time.Time{}
	if j.Enabled {
		j.NextRunAt, _ = NextRun(j, now, loc)
	}
	if j.Kind == CronAt && !j.At.After(now) {
		notice = fmt.Sprintf("at time %s is not in the future (now %s): the job is kept but will never run",
			j.At.Format(time.RFC3339), now.Format(time.RFC3339))
	}
	return j, notice, nil
}

// inferCronKind returns the kind of a job given without one: that of its
// one schedule field set (At, EverySeconds, Expr); "" when none is set
// (Validate then says what is missing). EINVALID when more than one is.
func inferCronKind(j CronJob) (string, error) {
	kind, n := "", 0
	if !j.At.IsZero() {
		kind, n = CronAt, n+1
	}
	if j.EverySeconds != 0 {
		kind, n = CronEvery, n+1
	}
	if j.Expr != "" {
		kind, n = CronCron, n+1
	}
	if n > 1 {
		return "", Errorf(EINVALID, "cron job %q gives %d schedules: give exactly one of at, every_seconds or expr (or set kind)", j.Name, n)
	}
	return kind, nil
}

// Validate checks the job's fields and returns EINVALID naming the first
// one at fault.
func (j CronJob) Validate() error {
	if !cronJobNameRE().MatchString(j.Name) {
		return Errorf(EINVALID, "cron job name %q: expected 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", j.Name)
	}
	switch j.Kind {
	case CronAt:
		if j.At.IsZero() {
			return Errorf(EINVALID, "cron job %q: kind \"at\" needs a time (RFC 3339, e.g. 2026-03-01T09:00:00+09:00)", j.Name)
		}
	case CronEvery:
		if j.EverySeconds < 1 || j.EverySeconds > MaxCronEvery {
			return Errorf(EINVALID, "cron job %q: kind \"every\" needs a period of 1 to %d seconds, got %d", j.Name, MaxCronEvery, j.EverySeconds)
		}
		if j.Anchor.IsZero() {
			return Errorf(EINVALID, "cron job %q: kind \"every\" needs an anchor time", j.Name)
		}
	case CronCron:
		if _, err := ParseCronExpr(j.Expr); err != nil {
			return err
		}
	case "":
		return Errorf(EINVALID, "cron job %q: missing schedule: give one of at (RFC 3339 time), every (seconds) or cron (5-field expression)", j.Name)
	default:
		return Errorf(EINVALID, "cron job %q: kind %q is unknown: expected \"at\", \"every\" or \"cron\"", j.Name, j.Kind)
	}
	if err := ValidateTarget(j.Target); err != nil {
		return err
	}
	if strings.TrimSpace(j.Message) == "" {
		return Errorf(EINVALID, "cron job %q: the message is empty", j.Name)
	}
	if !utf8.ValidString(j.Message) {
		return Errorf(EINVALID, "cron job %q: the message is not valid UTF-8", j.Name)
	}
	return nil
}

// ValidateTarget checks the shape of a message target: an agent name or a
// "#channel". Whether it exists is checked when a run posts to it.
func ValidateTarget(target string) error {
	if target == "" {
		return Errorf(EINVALID, "target is empty: expected an agent name or \"#channel\"")
	}
	if IsChannelTarget(target) {
		if !targetChannelRE().MatchString(target) {
			return Errorf(EINVALID, "target %q: a channel is \"#name\" with name matching %s", target, targetNamePattern)
		}
		return nil
	}
	if !targetAgentRE().MatchString(target) {
		return Errorf(EINVALID, "target %q: expected an agent name matching %s or \"#channel\"", target, targetNamePattern)
	}
	return nil
}

// NextRun returns the first fire time of job strictly after after, and false
// when there is none: an "at" time not after it, or a cron expression with
// no match within five years. "every" times are Anchor + k*period, so they
// do not drift with tick jitter or downtime; "cron" expressions are read in
// loc (the hub's time zone; nil means UTC).
func NextRun(job CronJob, after time.Time, loc *time.Location) (time.Time, bool) {
	if loc == nil {
		loc = time.UTC
	}
	switch job.Kind {
	case CronAt:
		if job.At.After(after) {
			return job.At, true
		}
	case CronEvery:
		if job.EverySeconds <= 0 {
			return time.Time{}, false
		}
		if job.Anchor.After(after) {
			return job.Anchor, true
		}
		period := time.Duration(job.EverySeconds) * time.Second
		k := after.Sub(job.Anchor)/period + 1
		return job.Anchor.Add(k * period), true
	case CronCron:
		sched, err := ParseCronExpr(job.Expr)
		if err != nil {
			return time.Time{}, false
		}
		if t := sched.Next(after.In(loc)); !t.IsZero() {
			return t, true
		}
	}
	return time.Time{}, false
}

// CronDue reports whether job should run at now: enabled, with a scheduled
// time that has come.
func CronDue(job CronJob, now time.Time) bool {
	return job.Enabled && !job.NextRunAt.IsZero() && !job.NextRunAt.After(now)
}

// ApplyCronRun updates job after run and returns the new job and whether
// this run disabled it. The error policy: a failure increments
// ConsecutiveErrors and the MaxCronConsecutiveErrors-th in a row disables the
// job; a success resets the count. The missed-run policy: the next run is
// the first slot after the later of the run's time and its scheduled slot,
// so however many slots passed while the hub was down, the job fires once.
// An "at" job that has run has no next run.
func ApplyCronRun(job CronJob, run CronRun, loc *time.Location) (_ CronJob, disabled bool) {
	job.LastRunAt = run.RanAt
	job.UpdatedAt = run.RanAt
	if run.Status == CronRunOK {
		job.ConsecutiveErrors = 0
	} else {
		job.ConsecutiveErrors++
		if job.ConsecutiveErrors >= MaxCronConsecutiveErrors && job.Enabled {
			job.Enabled = false
			disabled = true
		}
	}
	from := run.RanAt
	if run.ScheduledAt.After(from) {
		from = run.ScheduledAt
	}
	job.NextRunAt = time.Time{}
	if job.Enabled {
		if job.Kind == CronAt && !run.Manual {
			return job, disabled // one shot, done
		}
		job.NextRunAt, _ = NextRun(job, from, loc)
	}
	return job, disabled
}

// EnableCronJob returns job enabled at now with its error count reset and
// its next run computed from now (slots missed while disabled never fire).
func EnableCronJob(job CronJob, now time.Time, loc *time.Location) CronJob {
	job.Enabled = true
	job.ConsecutiveErrors = 0
	job.UpdatedAt = now
	job.NextRunAt = time.Time{}
	if job.Kind == CronAt && !job.LastRunAt.IsZero() && !job.LastRunAt.Before(job.At) {
		return job // already ran its one shot
	}
	job.NextRunAt, _ = NextRun(job, now, loc)
	return job
}

// DisableCronJob returns job disabled at now, with nothing scheduled.
func DisableCronJob(job CronJob, now time.Time) CronJob {
	job.Enabled = false
	job.UpdatedAt = now
	job.NextRunAt = time.Time{}
	return job
}
