package orchestrator_test

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestTickBeatsAdvanceExactlyPerInterval(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, token := r.agent("claude")
	if rep := r.tick(); rep.Beat != 0 || rep.Beats != 0 {
		t.Fatalf("first tick: beat %d (+%d), want 0", rep.Beat, rep.Beats)
	}
	steps := []struct {
		advance   time.Duration
		wantBeat  int64
		wantBeats int64
	}{
		{5*time.Minute - time.Second, 0, 0},
		{time.Second, 1, 1},
		{5 * time.Second, 1, 0},
		{12 * time.Minute, 3, 2}, // now t0+17m05s: beats at 10m and 15m
		{3 * time.Minute, 4, 1},  // t0+20m05s
	}
	for _, s := range steps {
		r.clock.Advance(s.advance)
		rep := r.tick()
		if rep.Beat != s.wantBeat || rep.Beats != s.wantBeats {
			t.Errorf("at +%v: beat %d (+%d), want %d (+%d)", r.clock.Now().Sub(t0), rep.Beat, rep.Beats, s.wantBeat, s.wantBeats)
		}
		if got := r.svc.Core.Beat(); got != s.wantBeat {
			t.Errorf("at +%v: Service.Beat() = %d, want %d", r.clock.Now().Sub(t0), got, s.wantBeat)
		}
	}
	r.call(token) // interaction at beat 4
	r.tick()

	// Beats survive a restart, and beats missed while down are counted.
	r.restart()
	if got := r.svc.Core.Beat(); got != 4 {
		t.Fatalf("after restart: beat %d, want 4", got)
	}
	r.clock.Advance(time.Hour)
	if rep := r.tick(); rep.Beat != 16 || rep.Beats != 12 {
		t.Errorf("an hour later: beat %d (+%d), want 16 (+12)", rep.Beat, rep.Beats)
	}
	info, err := r.svc.Schedule.BeatInfo(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Beat != 16 || info.Interval != 5*time.Minute || !info.StartedAt.Equal(t0) || !info.LastBeatAt.Equal(t0.Add(80*time.Minute)) {
		t.Errorf("BeatInfo = %+v", info.BeatState)
	}
	if len(info.Agents) != 1 || info.Agents[0].LastInteractionBeat != 4 || info.Agents[0].SinceLast != 12 || info.Agents[0].Reading != hub.BeatShortPause {
		t.Errorf("BeatInfo agents = %+v, want claude at beat 4, since_last 12, short_pause", info.Agents)
	}
}

func TestTickHealthSweepRecordsTransitionsAndExpiresDeepWork(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, token := r.agent("claude")
	r.tick()
	r.clock.Advance(5 * time.Minute)
	if rep := r.tick(); rep.Evaluated != 1 || rep.Events != 1 {
		t.Errorf("at +5m: evaluated %d, events %d; want 1 and 1 (healthy → warning)", rep.Evaluated, rep.Events)
	}
	if rep := r.tick(); rep.Evaluated != 0 {
		t.Errorf("at +5m again: evaluated %d agents, want 0 (nothing due)", rep.Evaluated)
	}
	r.clock.Advance(5 * time.Minute)
	r.tick()
	evs := r.events("claude", string(hub.EventHealthChanged))
	if len(evs) != 2 {
		t.Fatalf("health events = %d, want 2 (warning, anomaly): %+v", len(evs), evs)
	}

	// Strict deep work suppresses inactivity; its end expires it at once.
	if _, err := r.svc.Liveness.StartDeepWork(r.ctx, r.call(token), hub.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "refactor", PlannedMinutes: 30}); err != nil {
		t.Fatal(err)
	}
	r.run(30*time.Minute-5*time.Second, 5*time.Second)
	if n := len(r.events("claude", string(hub.EventDeepWorkExpired))); n != 0 {
		t.Fatalf("deep work expired before its end (%d events)", n)
	}
	r.clock.Advance(5 * time.Second)
	r.tick()
	if n := len(r.events("claude", string(hub.EventDeepWorkExpired))); n != 1 {
		t.Errorf("deep work expired events at its end = %d, want 1", n)
	}
	dw, _, err := r.svc.Liveness.DeepWork(r.ctx, r.call(token), 1)
	if err != nil {
		t.Fatal(err)
	}
	if dw != nil && dw.State == hub.DeepWorkActive {
		t.Errorf("deep work still active after its end: %+v", dw)
	}
}

func TestTickNudgesOncePerEpisodeThenBackoff(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, token := r.agent("claude")
	r.tick()
	r.clock.Advance(10*time.Minute - time.Second)
	if rep := r.tick(); rep.Nudged != 0 {
		t.Fatalf("nudged before the inactivity timeout")
	}
	r.clock.Advance(time.Second)
	if rep := r.tick(); rep.Nudged != 1 {
		t.Fatalf("no nudge at the inactivity timeout (report %+v)", rep)
	}
	ns := r.inbox(token, hub.KindNudge)
	if len(ns) != 1 || ns[0].From != hub.SenderOrchestrator || !contains(ns[0].Body, "@claude") || !contains(ns[0].Body, "no activity for 10m") || !ns[0].MentionsYou {
		t.Fatalf("nudge = %+v", ns)
	}
	// The episode goes on: the next nudges come after 20m, then 40m.
	want := []time.Duration{20 * time.Minute, 40 * time.Minute, 80 * time.Minute}
	for _, gap := range want {
		if n := r.run(gap-5*time.Second, 5*time.Second).Nudged; n != 0 {
			t.Fatalf("re-nudged %d times before the backoff of %v", n, gap)
		}
		if n := r.run(5*time.Second, 5*time.Second).Nudged; n != 1 {
			t.Fatalf("no re-nudge after the backoff of %v", gap)
		}
	}
	if n := len(r.events("claude", string(hub.EventNudge))); n != 4 {
		t.Errorf("nudge events = %d, want 4", n)
	}
	// The agent acts: the episode ends, and a new one starts 10m later.
	r.checkpoint(token)
	r.tick()
	if n := r.run(10*time.Minute-5*time.Second, 5*time.Second).Nudged; n != 0 {
		t.Errorf("nudged %d times within 10m of activity", n)
	}
	if n := r.run(5*time.Second, 5*time.Second).Nudged; n != 1 {
		t.Errorf("new episode: %d nudges at 10m, want 1", n)
	}
}

func TestTickNoNudgeDuringStrictDeepWork(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, token := r.agent("claude")
	r.checkpoint(token)
	if _, err := r.svc.Liveness.StartDeepWork(r.ctx, r.call(token), hub.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "long build", PlannedMinutes: 60}); err != nil {
		t.Fatal(err)
	}
	if n := r.run(60*time.Minute-5*time.Second, 5*time.Second).Nudged; n != 0 {
		t.Fatalf("nudged %d times during strict deep work", n)
	}
	if n := r.run(5*time.Second, 5*time.Second).Nudged; n != 1 {
		t.Errorf("no nudge when strict deep work ended 50m past the timeout")
	}

	// Flexible deep work does not suppress nudges.
	r2 := newRig(t)
	_, tok2 := r2.agent("gemini")
	r2.checkpoint(tok2)
	if _, err := r2.svc.Liveness.StartDeepWork(r2.ctx, r2.call(tok2), hub.StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "reading"}); err != nil {
		t.Fatal(err)
	}
	if n := r2.run(10*time.Minute, 5*time.Second).Nudged; n != 1 {
		t.Errorf("flexible deep work: %d nudges at 10m, want 1", n)
	}
}

func TestTickNudgesUnreadMentions(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, ta := r.agent("claude")
	_, tb := r.agent("gemini")
	r.tick()
	if _, err := r.svc.Messages.Post(r.ctx, r.call(tb), "", hub.PostRequest{Channel: "#dev", Body: "@claude can you review?"}); err != nil {
		t.Fatal(err)
	}
	// claude keeps working (checkpoints) but does not read its mentions.
	for i := 0; i < 3; i++ {
		r.checkpoint(ta)
		r.run(4*time.Minute, 5*time.Second)
		if i < 2 && len(r.inbox(ta, hub.KindNudge)) != 0 {
			t.Fatalf("nudged before the mention was 10m old")
		}
	}
	ns := r.inbox(ta, hub.KindNudge)
	if len(ns) != 1 || !contains(ns[0].Body, "1 unread mention since 10:00") || contains(ns[0].Body, "no activity") {
		t.Errorf("nudge = %+v", ns)
	}
}

func TestTickPulsePreconditions(t *testing.T) {
	t.Parallel()
	base := hub.PulseConfig{Enabled: true, Interval: 30 * time.Minute, Instructions: "Check reminders. Reply HEARTBEAT_OK if nothing to report."}
	tests := []struct {
		name       string
		cfg        func(*hub.PulseConfig)
		setup      func(r *rig, token string) // before the tick
		wantPulse  bool
		wantReason string
	}{
		{"all hold", nil, nil, true, ""},
		{"disabled", func(c *hub.PulseConfig) { c.Enabled = false }, nil, false, hub.PulseDisabled},
		{"no instructions", func(c *hub.PulseConfig) { c.Instructions = "" }, nil, false, hub.PulseInstructionsEmpty},
		{"outside active hours", func(c *hub.PulseConfig) { c.ActiveHours = "22:00-06:00" }, nil, false, hub.PulseOutsideActiveHours},
		{"inside wrapped hours in its zone", func(c *hub.PulseConfig) { c.ActiveHours, c.TimeZone = "18:00-02:00", "Asia/Tokyo" }, nil, true, ""},
		{"agent busy", nil, func(r *rig, token string) { r.call(token) }, false, hub.PulseAgentBusy},
		{"not due", nil, func(r *rig, token string) {
			if _, _, err := r.svc.Schedule.TriggerPulse(r.ctx, "claude"); err != nil {
				r.tb.Fatal(err)
			}
			if _, err := r.svc.Schedule.RespondToPulse(r.ctx, r.call(token), hub.HeartbeatOK); err != nil {
				r.tb.Fatal(err)
			}
			r.clock.Advance(time.Minute)
		}, false, hub.PulseIntervalNotElapsed},
		{"unanswered", nil, func(r *rig, token string) {
			if _, _, err := r.svc.Schedule.TriggerPulse(r.ctx, "claude"); err != nil {
				r.tb.Fatal(err)
			}
			r.clock.Advance(31 * time.Minute)
		}, false, hub.PulseUnanswered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			_, token := r.agent("claude")
			cfg := base
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			if _, err := r.svc.Schedule.SetPulseConfig(r.ctx, "claude", cfg); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(r, token)
			}
			before := len(r.inbox(token, hub.KindHeartbeat))
			r.clock.Advance(time.Second)
			rep := r.tick()
			got := len(r.inbox(token, hub.KindHeartbeat)) - before
			if (rep.Pulses == 1) != tt.wantPulse || (got == 1) != tt.wantPulse {
				t.Errorf("pulses sent %d, delivered %d; want pulse=%v", rep.Pulses, got, tt.wantPulse)
			}
			ps, err := r.svc.Schedule.ListPulses(r.ctx)
			if err != nil || len(ps) != 1 {
				t.Fatalf("ListPulses = %v, %v", ps, err)
			}
			if !tt.wantPulse && ps[0].Reason != tt.wantReason && ps[0].State.LastReason != tt.wantReason {
				t.Errorf("reason = %q (last recorded %q), want %q", ps[0].Reason, ps[0].State.LastReason, tt.wantReason)
			}
		})
	}
}

func TestTickPulseDeliveryAndReplies(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	a, token := r.agent("claude")
	_, obs := r.agent("watcher")
	if _, err := r.svc.Messages.JoinChannel(r.ctx, r.call(obs), "#claude-heartbeat"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Schedule.SetPulseConfig(r.ctx, "claude", hub.PulseConfig{Enabled: true, Interval: 30 * time.Minute, Instructions: "Check reminders."}); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(time.Minute) // the watcher's call is no longer "busy" for claude anyway
	if rep := r.tick(); rep.Pulses != 1 {
		t.Fatalf("first tick sent %d pulses, want 1", rep.Pulses)
	}
	hb := r.inbox(token, hub.KindHeartbeat)
	wantID := hub.FormatHeartbeatID(r.clock.Now(), time.UTC)
	if len(hb) != 1 || !contains(hb[0].Body, "Check reminders.") || !contains(hb[0].Body, wantID) || hb[0].From != hub.SenderOrchestrator {
		t.Fatalf("pulse message = %+v", hb)
	}
	if got := r.call(token).CurrentHeartbeatID; got != wantID || got == a.CurrentHeartbeatID {
		t.Errorf("current heartbeat ID = %q, want the pulse's %q", got, wantID)
	}

	replies := []struct {
		text, want string
		posted     bool
	}{
		{hub.HeartbeatOK, hub.PulseOutcomeOK, false},
		{"2 reminders are due", hub.PulseOutcomePosted, true},
		{"2 reminders are due", hub.PulseOutcomeDuplicate, false},
		{"HEARTBEAT_OK", hub.PulseOutcomeOK, false},
		{"3 reminders are due", hub.PulseOutcomePosted, true},
	}
	for i, rp := range replies {
		if i > 0 {
			if n := r.run(30*time.Minute, 5*time.Second).Pulses; n != 1 {
				t.Fatalf("reply %d: %d pulses in the next 30m, want 1", i, n)
			}
		}
		before := len(r.inbox(obs, ""))
		res, err := r.svc.Schedule.RespondToPulse(r.ctx, r.call(token), rp.text)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != rp.want {
			t.Errorf("reply %d %q: outcome %q, want %q", i, rp.text, res.Outcome, rp.want)
		}
		if got := len(r.inbox(obs, "")) - before; (got == 1) != rp.posted {
			t.Errorf("reply %d %q: %d messages reached #claude-heartbeat, want posted=%v", i, rp.text, got, rp.posted)
		}
	}
	// An agent without a pulse cannot answer one.
	if _, err := r.svc.Schedule.RespondToPulse(r.ctx, r.call(obs), "hi"); hub.ErrorCode(err) != hub.EPRECONDITION {
		t.Errorf("RespondToPulse without a pulse: %v, want EPRECONDITION", err)
	}
}

// cronRuns returns the runs of job, oldest first.
func (r *rig) cronRuns(job string) []*hub.CronRun {
	r.tb.Helper()
	rs, err := r.svc.Schedule.ListCronRuns(r.ctx, job, 500)
	if err != nil {
		r.tb.Fatalf("ListCronRuns: %v", err)
	}
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return rs
}

func (r *rig) cronJob(j hub.CronJob) *hub.CronJob {
	r.tb.Helper()
	j.Enabled = true
	out, _, err := r.svc.Schedule.CreateCronJob(r.ctx, j)
	if err != nil {
		r.tb.Fatalf("CreateCronJob %s: %v", j.Name, err)
	}
	return out
}

func TestTickCronFireTimes(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, token := r.agent("claude")
	r.cronJob(hub.CronJob{Name: "every", Kind: hub.CronEvery, EverySeconds: 60, Anchor: t0.Add(7 * time.Second), Target: "claude", Message: "tick"})
	r.cronJob(hub.CronJob{Name: "quarter", Kind: hub.CronCron, Expr: "*/15 * * * *", Target: "claude", Message: "quarter"})
	r.cronJob(hub.CronJob{Name: "once", Kind: hub.CronAt, At: t0.Add(90 * time.Second), Target: "claude", Message: "once"})
	_, notice, err := r.svc.Schedule.CreateCronJob(r.ctx, hub.CronJob{Name: "past", Kind: hub.CronAt, At: t0.Add(-time.Hour), Target: "claude", Message: "never", Enabled: true})
	if err != nil || !contains(notice, "never run") {
		t.Fatalf("at in the past: notice %q, err %v", notice, err)
	}
	r.run(31*time.Minute, 5*time.Second)

	check := func(job string, want []time.Duration) {
		t.Helper()
		runs := r.cronRuns(job)
		if len(runs) != len(want) {
			t.Fatalf("%s: %d runs, want %d", job, len(runs), len(want))
		}
		for i, run := range runs {
			if !run.ScheduledAt.Equal(t0.Add(want[i])) || run.Status != hub.CronRunOK {
				t.Errorf("%s run %d: scheduled +%v status %s, want +%v ok", job, i, run.ScheduledAt.Sub(t0), run.Status, want[i])
			}
			if lag := run.RanAt.Sub(run.ScheduledAt); lag < 0 || lag >= 5*time.Second {
				t.Errorf("%s run %d ran %v after its slot, want within one tick", job, i, lag)
			}
		}
	}
	var every []time.Duration
	for i := 0; i <= 30; i++ {
		every = append(every, 7*time.Second+time.Duration(i)*time.Minute)
	}
	check("every", every)
	check("quarter", []time.Duration{15 * time.Minute, 30 * time.Minute})
	check("once", []time.Duration{90 * time.Second})
	check("past", nil)
	if got, want := len(r.inbox(token, hub.KindCron)), 31+2+1; got != want {
		t.Errorf("cron messages delivered = %d, want %d", got, want)
	}
	if ms := r.inbox(token, hub.KindCron); !contains(ms[0].Body, "[cron every] tick") {
		t.Errorf("first cron message = %q", ms[0].Body)
	}
}

func TestTickCronErrorPolicy(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.cronJob(hub.CronJob{Name: "to-ghost", Kind: hub.CronEvery, EverySeconds: 60, Anchor: t0, Target: "ghost", Message: "hello?"})
	r.cronJob(hub.CronJob{Name: "flaky", Kind: hub.CronEvery, EverySeconds: 60, Anchor: t0, Target: "late", Message: "hi"})
	r.run(4*time.Minute, 5*time.Second)
	jobs := map[string]*hub.CronJob{}
	list := func() {
		js, err := r.svc.Schedule.ListCronJobs(r.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			jobs[j.Name] = j
		}
	}
	list()
	if j := jobs["to-ghost"]; !j.Enabled || j.ConsecutiveErrors != 4 {
		t.Fatalf("after 4 failures: enabled=%v errors=%d", j.Enabled, j.ConsecutiveErrors)
	}
	// "late"'s target appears: the next run succeeds and resets the count.
	r.agent("late")
	r.run(time.Minute, 5*time.Second)
	list()
	if j := jobs["flaky"]; !j.Enabled || j.ConsecutiveErrors != 0 {
		t.Errorf("after a success: enabled=%v errors=%d, want enabled with 0", j.Enabled, j.ConsecutiveErrors)
	}
	if j := jobs["to-ghost"]; j.Enabled || j.ConsecutiveErrors != 5 || !j.NextRunAt.IsZero() {
		t.Errorf("after 5 failures: enabled=%v errors=%d next=%v, want disabled", j.Enabled, j.ConsecutiveErrors, j.NextRunAt)
	}
	runs := r.cronRuns("to-ghost")
	if len(runs) != 5 || runs[4].Status != hub.CronRunError || !contains(runs[4].Error, `"ghost" does not exist`) {
		t.Errorf("to-ghost runs = %d, last %+v", len(runs), runs[len(runs)-1])
	}
	if evs := r.events("", string(hub.EventCronDisabled)); len(evs) != 1 || !contains(evs[0].Detail, "to-ghost") {
		t.Errorf("cron_disabled events = %+v, want one naming to-ghost", evs)
	}
	r.run(5*time.Minute, 5*time.Second)
	if n := len(r.cronRuns("to-ghost")); n != 5 {
		t.Errorf("a disabled job ran: %d runs", n)
	}
	// Enabling resets the count and schedules from now.
	j, err := r.svc.Schedule.SetCronJobEnabled(r.ctx, "to-ghost", true)
	if err != nil || !j.Enabled || j.ConsecutiveErrors != 0 || !j.NextRunAt.After(r.clock.Now()) {
		t.Errorf("enable: %+v, %v", j, err)
	}
	// A manual run is recorded and does not move the schedule.
	run, err := r.svc.Schedule.RunCronJob(r.ctx, "flaky")
	if err != nil || run.Status != hub.CronRunOK {
		t.Errorf("RunCronJob = %+v, %v", run, err)
	}
}

func TestTickCronMissedRunsFireOnceAfterRestart(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, token := r.agent("claude")
	r.cronJob(hub.CronJob{Name: "minutely", Kind: hub.CronEvery, EverySeconds: 60, Anchor: t0, Target: "claude", Message: "m"})
	r.cronJob(hub.CronJob{Name: "hourly", Kind: hub.CronCron, Expr: "0 * * * *", Target: "claude", Message: "h"})
	r.run(65*time.Second, 5*time.Second) // one run of minutely
	if n := len(r.cronRuns("minutely")); n != 1 {
		t.Fatalf("before the outage: %d runs, want 1", n)
	}
	// The hub is down for 3h10m: 190 minutely slots and 3 hourly ones pass.
	r.db.Close()
	r.clock.Advance(3*time.Hour + 10*time.Minute)
	r.open()
	before := len(r.inbox(token, hub.KindCron))
	rep := r.tick()
	if rep.CronRuns != 2 {
		t.Errorf("first tick after restart ran %d jobs, want 2 (each once)", rep.CronRuns)
	}
	if got := len(r.inbox(token, hub.KindCron)) - before; got != 2 {
		t.Errorf("messages after restart = %d, want 2", got)
	}
	if n := r.tick().CronRuns; n != 0 {
		t.Errorf("second tick ran %d jobs, want 0", n)
	}
	runs := r.cronRuns("minutely")
	if last := runs[len(runs)-1]; !last.ScheduledAt.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("catch-up run scheduled at +%v, want the first missed slot +2m", last.ScheduledAt.Sub(t0))
	}
	js, _ := r.svc.Schedule.ListCronJobs(r.ctx)
	for _, j := range js {
		if !j.NextRunAt.After(r.clock.Now()) {
			t.Errorf("%s: next run %v is not after now %v", j.Name, j.NextRunAt, r.clock.Now())
		}
		if j.Name == "minutely" && (j.NextRunAt.Sub(t0)%time.Minute != 0 || j.NextRunAt.Sub(r.clock.Now()) > time.Minute) {
			t.Errorf("minutely: next run +%v is off the anchor grid or not the next slot", j.NextRunAt.Sub(t0))
		}
	}
}

func TestNudgeManual(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, token := r.agent("claude")
	m, err := r.svc.Nudges.Nudge(r.ctx, "claude", "please post your status")
	if err != nil {
		t.Fatal(err)
	}
	if m.Body != "@claude: please post your status" || m.Kind != hub.KindNudge {
		t.Errorf("manual nudge = %+v", m)
	}
	if ns := r.inbox(token, hub.KindNudge); len(ns) != 1 || !ns[0].MentionsYou {
		t.Errorf("inbox = %+v", ns)
	}
	if _, err := r.svc.Nudges.Nudge(r.ctx, "nobody", ""); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("nudge unknown agent: %v, want ENOTFOUND", err)
	}
	m, err = r.svc.Nudges.Nudge(r.ctx, "claude", "")
	if err != nil || !contains(m.Body, "no activity for") {
		t.Errorf("default nudge = %+v, %v", m, err)
	}
}
