package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The orchestrator's commands: beat, nudge, pulses, cron.

// noArgs parses args that must hold no positional argument.
func (c *cli) noArgs(fs *flag.FlagSet, args []string, name string) error {
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("%s takes no arguments, got %q", name, pos)
	}
	return nil
}

func runBeat(ctx context.Context, c *cli, args []string) error {
	if err := c.noArgs(c.flags("beat"), args, "beat"); err != nil {
		return err
	}
	r, err := c.admin.GetBeat(ctx, &hubv1.GetBeatRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	b := r.GetBeat()
	now := time.Now()
	interval := time.Duration(b.GetIntervalSeconds()) * time.Second
	started := fmtTime(b.GetStartedAt())
	if b.GetStartedAt() != nil {
		started += " (" + fmtAgo(b.GetStartedAt(), now) + ")"
	}
	c.fields(
		"Beat", strconv.FormatInt(b.GetBeat(), 10),
		"Started", started,
		"Last beat", fmtTime(b.GetLastBeatAt()),
		"Interval", fmtDuration(interval),
	)
	if len(b.GetAgents()) == 0 {
		return nil
	}
	fmt.Fprintln(c.out)
	rows := make([][]string, 0, len(b.GetAgents()))
	for _, a := range b.GetAgents() {
		since := strconv.FormatInt(a.GetSinceLast(), 10) + " beats"
		if interval > 0 {
			since += " (~" + fmtDuration(time.Duration(a.GetSinceLast())*interval) + ")"
		}
		rows = append(rows, []string{a.GetAgent(), strconv.FormatInt(a.GetLastInteractionBeat(), 10), since, a.GetReading()})
	}
	c.table([]string{"AGENT", "LAST INTERACTION BEAT", "SINCE LAST", "READING"}, rows)
	return nil
}

func runNudge(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("nudge")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("give the agent's NAME (and optionally the TEXT of the nudge)")
	}
	r, err := c.admin.Nudge(ctx, &hubv1.NudgeRequest{Name: pos[0], Text: strings.Join(pos[1:], " ")})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "Nudged %s (message %s): %s\n", pos[0], r.GetMessage().GetId(), r.GetMessage().GetBody())
	return nil
}

// pulseStatusText is a pulse's STATUS column: "ready" or why not.
// pulseReasons say in words why a pulse does not fire now.
var pulseReasons = map[string]string{
	"disabled":             "disabled with pulse set --disable",
	"no_instructions":      "no instructions to send",
	"not_due":              "interval not yet elapsed",
	"outside_active_hours": "outside its active hours",
	"unanswered":           "waiting for the answer to the last pulse",
	"busy":                 "the agent is busy (it made a call just now); retried when it pauses",
}

func pulseStatusText(p *hubv1.PulseStatus) string {
	r := p.GetBlockedReason()
	if r == "" {
		return "ready"
	}
	if words, ok := pulseReasons[r]; ok {
		return "blocked: " + words
	}
	return "blocked: " + r
}

func runPulses(ctx context.Context, c *cli, args []string) error {
	if err := c.noArgs(c.flags("pulses"), args, "pulses"); err != nil {
		return err
	}
	r, err := c.admin.ListPulses(ctx, &hubv1.ListPulsesRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetPulses()) == 0 {
		fmt.Fprintln(c.out, "No pulses configured: set one with `hubctl pulse set NAME --instructions TEXT`.")
		return nil
	}
	now := time.Now()
	rows := make([][]string, 0, len(r.GetPulses()))
	for _, p := range r.GetPulses() {
		cfg := p.GetConfig()
		hours := dash(cfg.GetActiveHours())
		if cfg.GetActiveHours() == "" {
			hours = "all day"
		}
		if cfg.GetTimeZone() != "" {
			hours += " " + cfg.GetTimeZone()
		}
		rows = append(rows, []string{
			cfg.GetAgent(), yesNo(cfg.GetEnabled()), fmtDuration(time.Duration(cfg.GetIntervalSeconds()) * time.Second), hours,
			fmtAgo(p.GetLastPulseAt(), now), yesNo(p.GetUnanswered()), pulseStatusText(p), fmtTime(p.GetNextDueAt()),
			truncate(dash(p.GetLastOutput()), 40),
		})
	}
	c.table([]string{"AGENT", "ENABLED", "INTERVAL", "ACTIVE HOURS", "LAST PULSE", "UNANSWERED", "STATUS", "NEXT DUE", "LAST OUTPUT"}, rows)
	return nil
}

// readText returns the contents of file ("-" is stdin).
func (c *cli) readText(file string) (string, error) {
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(c.in)
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return "", fmt.Errorf("read instructions: %w", err)
	}
	return string(b), nil
}

func runPulseSet(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("pulse set")
	instructions := fs.String("instructions", "", "the standing instruction sent with each pulse (like HEARTBEAT.md)")
	file := fs.String("instructions-file", "", "read the instructions from FILE (- for stdin)")
	interval := fs.Duration("interval", 0, "time between pulses (default 30m for a new pulse)")
	hours := fs.String("hours", "", `active hours "HH:MM-HH:MM", may wrap midnight ("22:00-06:00"); "" for all day`)
	tz := fs.String("tz", "", "IANA time zone of the active hours (default: the hub's)")
	channel := fs.String("channel", "", "where meaningful replies are posted (default #NAME-heartbeat)")
	disable := fs.Bool("disable", false, "keep the configuration but stop pulses")
	name, err := c.oneName(fs, args, "agent")
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["instructions"] && set["instructions-file"] {
		return usageErrorf("give --instructions or --instructions-file, not both")
	}
	if set["interval"] && (*interval < time.Second || *interval%time.Second != 0) {
		return usageErrorf("--interval %s: give whole seconds, at least 1s (e.g. 30m)", *interval)
	}
	// Start from the current config: flags not given keep their value.
	cfg := &hubv1.PulseConfig{Agent: name, Enabled: true}
	list, err := c.admin.ListPulses(ctx, &hubv1.ListPulsesRequest{})
	if err != nil {
		return err
	}
	for _, p := range list.GetPulses() {
		if p.GetConfig().GetAgent() == name {
			cfg = p.GetConfig()
		}
	}
	if set["instructions"] {
		cfg.Instructions = *instructions
	}
	if set["instructions-file"] {
		if cfg.Instructions, err = c.readText(*file); err != nil {
			return err
		}
	}
	if set["interval"] {
		cfg.IntervalSeconds = int64(*interval / time.Second)
	}
	if set["hours"] {
		cfg.ActiveHours = *hours
	}
	if set["tz"] {
		cfg.TimeZone = *tz
	}
	if set["channel"] {
		cfg.OutputChannel = *channel
	}
	cfg.Enabled = !*disable
	r, err := c.admin.SetPulseConfig(ctx, &hubv1.SetPulseConfigRequest{Config: cfg})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	p := r.GetPulse()
	fmt.Fprintf(c.out, "Pulse of %s set: every %s, %s; %s.\n", name,
		fmtDuration(time.Duration(p.GetConfig().GetIntervalSeconds())*time.Second),
		map[bool]string{true: "enabled", false: "disabled"}[p.GetConfig().GetEnabled()], pulseStatusText(p))
	return nil
}

func runPulseTrigger(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("pulse trigger")
	name, err := c.oneName(fs, args, "agent")
	if err != nil {
		return err
	}
	r, err := c.admin.TriggerPulse(ctx, &hubv1.TriggerPulseRequest{Name: name})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "Pulse sent to %s: heartbeat %s (message %s).\n", name, r.GetHeartbeatId(), r.GetMessage().GetId())
	return nil
}

// parseTime parses an RFC 3339 time for a flag.
func parseTime(flagName, s string) (*timestamppb.Timestamp, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, usageErrorf("--%s %q is not an RFC 3339 time: expected e.g. 2026-03-01T09:00:00+09:00 or 2026-03-01T00:00:00Z", flagName, s)
	}
	return timestamppb.New(t), nil
}

func runCronAdd(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("cron add")
	every := fs.Duration("every", 0, "run every period (whole seconds: 1s, 90s, 1h), aligned to --anchor")
	at := fs.String("at", "", "run once at this RFC 3339 time")
	expr := fs.String("cron", "", `run on a 5-field cron expression in the hub's time zone ("0 9 * * 1-5")`)
	anchor := fs.String("anchor", "", "with --every: RFC 3339 time the fire times align to (default: now)")
	to := fs.String("to", "", "target: an agent name or #channel")
	message := fs.String("message", "", "the message to post at each run")
	project := fs.String("project", "", "the job's project: its #channel is that project's, its agent must be in it (default: default)")
	name, err := c.oneName(fs, args, "job")
	if err != nil {
		return err
	}
	job := &hubv1.CronJob{Name: name, Target: *to, Message: *message, Project: *project}
	kinds := 0
	if *every != 0 {
		kinds++
		if *every < time.Second || *every%time.Second != 0 {
			return usageErrorf("--every %s: give whole seconds, at least 1s", *every)
		}
		job.Kind, job.EverySeconds = "every", int64(*every/time.Second)
		if *anchor != "" {
			if job.Anchor, err = parseTime("anchor", *anchor); err != nil {
				return err
			}
		}
	} else if *anchor != "" {
		return usageErrorf("--anchor goes with --every")
	}
	if *at != "" {
		kinds++
		job.Kind = "at"
		if job.At, err = parseTime("at", *at); err != nil {
			return err
		}
	}
	if *expr != "" {
		kinds++
		job.Kind, job.Expr = "cron", *expr
	}
	switch {
	case kinds == 0:
		return usageErrorf("give a schedule: --every DURATION, --at TIME or --cron EXPR")
	case kinds > 1:
		return usageErrorf("give one schedule: --every, --at or --cron")
	case *to == "":
		return usageErrorf("give the target with --to AGENT or --to '#channel'")
	case *message == "":
		return usageErrorf("give the message with --message TEXT")
	}
	r, err := c.admin.CreateCronJob(ctx, &hubv1.CreateCronJobRequest{Job: job})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	j := r.GetJob()
	fmt.Fprintf(c.out, "Created cron job %s (%s → %s); next run %s.\n", j.GetName(), cronSchedule(j), j.GetTarget(), fmtTime(j.GetNextRunAt()))
	if w := r.GetWarning(); w != "" {
		fmt.Fprintf(c.out, "Warning: %s\n", w)
	}
	return nil
}

// cronSchedule describes a job's schedule in one cell.
func cronSchedule(j *hubv1.CronJob) string {
	switch j.GetKind() {
	case "at":
		return "at " + fmtTime(j.GetAt())
	case "every":
		return "every " + fmtDuration(time.Duration(j.GetEverySeconds())*time.Second)
	case "cron":
		return "cron " + j.GetExpr()
	}
	return j.GetKind()
}

func runCronList(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("cron list")
	project := fs.String("project", "", "only this project's jobs")
	if err := c.noArgs(fs, args, "cron list"); err != nil {
		return err
	}
	r, err := c.admin.ListCronJobs(ctx, &hubv1.ListCronJobsRequest{Project: *project})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetJobs()) == 0 {
		fmt.Fprintln(c.out, "No cron jobs: add one with `hubctl cron add NAME --every 1h --to AGENT --message TEXT`.")
		return nil
	}
	rows := make([][]string, 0, len(r.GetJobs()))
	for _, j := range r.GetJobs() {
		next := fmtTime(j.GetNextRunAt())
		if j.GetNextRunAt() == nil && j.GetEnabled() {
			next = "never"
		}
		rows = append(rows, []string{j.GetName(), cronSchedule(j), j.GetTarget(), yesNo(j.GetEnabled()),
			strconv.FormatInt(j.GetConsecutiveErrors(), 10), next, fmtTime(j.GetLastRunAt()), truncate(j.GetMessage(), 40)})
	}
	c.table([]string{"NAME", "SCHEDULE", "TARGET", "ENABLED", "ERRORS", "NEXT RUN", "LAST RUN", "MESSAGE"}, rows)
	return nil
}

func runCronRm(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("cron rm")
	name, err := c.oneName(fs, args, "job")
	if err != nil {
		return err
	}
	r, err := c.admin.DeleteCronJob(ctx, &hubv1.DeleteCronJobRequest{Name: name})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "Deleted cron job %s.\n", name)
	return nil
}

func runCronSetEnabled(enabled bool) func(context.Context, *cli, []string) error {
	verb := map[bool]string{true: "enable", false: "disable"}[enabled]
	return func(ctx context.Context, c *cli, args []string) error {
		fs := c.flags("cron " + verb)
		name, err := c.oneName(fs, args, "job")
		if err != nil {
			return err
		}
		r, err := c.admin.SetCronJobEnabled(ctx, &hubv1.SetCronJobEnabledRequest{Name: name, Enabled: enabled})
		if err != nil {
			return err
		}
		if c.json {
			return c.printProto(r)
		}
		fmt.Fprintf(c.out, "Cron job %s %sd; next run %s.\n", name, verb, fmtTime(r.GetJob().GetNextRunAt()))
		return nil
	}
}

func runCronRun(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("cron run")
	name, err := c.oneName(fs, args, "job")
	if err != nil {
		return err
	}
	r, err := c.admin.RunCronJob(ctx, &hubv1.RunCronJobRequest{Name: name})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	run := r.GetRun()
	if run.GetStatus() != "ok" {
		fmt.Fprintf(c.out, "Cron job %s ran and failed: %s\n", name, run.GetError())
		return nil
	}
	fmt.Fprintf(c.out, "Cron job %s ran: ok (%dµs).\n", name, run.GetDurationMicros())
	return nil
}

func runCronRuns(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("cron runs")
	limit := fs.Int("limit", 20, "how many runs, newest first")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErrorf("give at most one job NAME, got %q", pos)
	}
	req := &hubv1.ListCronRunsRequest{Limit: int32(*limit)}
	if len(pos) == 1 {
		req.Job = pos[0]
	}
	r, err := c.admin.ListCronRuns(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetRuns()) == 0 {
		fmt.Fprintln(c.out, "No runs yet.")
		return nil
	}
	rows := make([][]string, 0, len(r.GetRuns()))
	for _, run := range r.GetRuns() {
		rows = append(rows, []string{run.GetJob(), fmtTime(run.GetScheduledAt()), fmtTime(run.GetRanAt()), run.GetStatus(),
			strconv.FormatInt(run.GetDurationMicros(), 10) + "µs", dash(run.GetError())})
	}
	c.table([]string{"JOB", "SCHEDULED", "RAN", "STATUS", "DURATION", "ERROR"}, rows)
	return nil
}
