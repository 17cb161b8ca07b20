package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// The orchestrator's tables: agent checks, mentions, pulses, cron jobs and
// runs, and their due queries.
func testSchedule(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	mustUpdate(t, db, func(tx hub.Tx) error {
		if c, err := tx.AgentCheck(ann.ID); err != nil || !same(c, hub.AgentCheck{AgentID: ann.ID}) {
			t.Errorf("AgentCheck with none stored = %+v, %v; want zero", c, err)
		}
		c := hub.AgentCheck{AgentID: ann.ID, NextCheckAt: t0.Add(time.Hour), Episode: "e1", NudgeCount: 2, LastNudgeAt: t0}
		if err := tx.PutAgentCheck(c); err != nil {
			return err
		}
		if err := tx.ScheduleAgentCheck(ann.ID, t0.Add(2*time.Hour)); err != nil { // later: kept as is
			return err
		}
		if err := tx.ScheduleAgentCheck(bob.ID, t0.Add(time.Minute)); err != nil { // none stored: inserted
			return err
		}
		got, err := tx.AgentCheck(ann.ID)
		if err != nil || !same(got, c) {
			t.Errorf("AgentCheck = %+v, %v; want %+v", got, err, c)
		}
		due, err := tx.DueAgentChecks(t0.Add(time.Hour), 10)
		if !slices.Equal(due, []int64{bob.ID, ann.ID}) {
			t.Errorf("DueAgentChecks = %v, %v; want [bob ann]", due, err)
		}
		if err := tx.ScheduleAgentCheck(ann.ID, t0); err != nil { // earlier: moved
			return err
		}
		due, err = tx.DueAgentChecks(t0.Add(time.Minute), 1)
		if !slices.Equal(due, []int64{ann.ID}) {
			t.Errorf("DueAgentChecks after moving ann earlier = %v, %v; want [ann]", due, err)
		}

		// Mentions, except the orchestrator's own.
		for i, from := range []string{"bob", hub.SenderOrchestrator, "bob"} {
			m := &hub.Message{From: from, Body: "@ann", Mentions: []string{"ann"}, Kind: hub.KindMessage, CreatedAt: t0.Add(time.Duration(i) * time.Second)}
			if err := tx.InsertMessage(m, []hub.Delivery{{AgentID: ann.ID, Mention: true}, {AgentID: bob.ID}}); err != nil {
				return err
			}
		}
		ms, err := tx.MentionsAfter(0, 10)
		if err != nil {
			return err
		}
		if len(ms) != 2 || ms[0].AgentID != ann.ID || !ms[0].CreatedAt.Equal(t0) || ms[1].MessageID <= ms[0].MessageID {
			t.Errorf("MentionsAfter(0) = %+v, want ann's two mentions by bob", ms)
		}
		n, oldest, err := tx.UnreadMentions(ann.ID, ms[0].MessageID)
		if n != 1 || !oldest.Equal(t0.Add(2*time.Second)) {
			t.Errorf("UnreadMentions after the first = %d, %v; want 1, %v", n, oldest, t0.Add(2*time.Second))
		}
		return err
	})

	// Pulses.
	cfg := hub.PulseConfig{AgentID: ann.ID, Enabled: true, Interval: 30 * time.Minute, ActiveHours: "09:00-17:00", TimeZone: "Asia/Tokyo",
		Instructions: "check", OutputChannel: "#ann-heartbeat", UpdatedAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error {
		if _, err := tx.Pulse(ann.ID); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("Pulse with none = %v, want ENOTFOUND", err)
		}
		if err := tx.PutPulseState(hub.PulseState{AgentID: ann.ID}, t0); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("PutPulseState with no config = %v, want ENOTFOUND", err)
		}
		if err := tx.PutPulseConfig(cfg, t0.Add(time.Minute)); err != nil {
			return err
		}
		st := hub.PulseState{AgentID: ann.ID, LastPulseAt: t0, Unanswered: true, LastOutput: "out", LastOutcome: "ok",
			LastRespondAt: t0.Add(time.Second), PulseCount: 3, LastReason: "due", LastCheckedAt: t0.Add(2 * time.Second)}
		if err := tx.PutPulseState(st, t0.Add(time.Hour)); err != nil {
			return err
		}
		cfg.Interval = time.Hour
		if err := tx.PutPulseConfig(cfg, t0.Add(time.Hour)); err != nil { // keeps the state
			return err
		}
		p, err := tx.Pulse(ann.ID)
		if err != nil {
			return err
		}
		if p.AgentName != "ann" || !same(p.Config, cfg) || p.State.PulseCount != 3 || !p.State.Unanswered || !p.State.LastRespondAt.Equal(st.LastRespondAt) ||
			p.State.LastOutput != "out" || !p.NextCheckAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("Pulse = %+v, want config %+v and state %+v", p, cfg, st)
		}
		ps, err := tx.Pulses()
		if len(ps) != 1 {
			t.Errorf("Pulses = %d pulses, %v; want 1", len(ps), err)
		}
		for _, tc := range []struct {
			at   time.Time
			want []int64
		}{{t0.Add(time.Minute), nil}, {t0.Add(time.Hour), []int64{ann.ID}}} {
			if due, err := tx.DuePulses(tc.at, 10); !slices.Equal(due, tc.want) || err != nil {
				t.Errorf("DuePulses(%v) = %v, %v; want %v", tc.at, due, err, tc.want)
			}
		}
		return nil
	})

	// Cron jobs and runs.
	job := &hub.CronJob{Name: "daily", Kind: hub.CronCron, Expr: "0 9 * * *", Project: "ops-team", Target: "#ops", Message: "standup", Enabled: true,
		NextRunAt: t0.Add(time.Hour), CreatedAt: t0, UpdatedAt: t0, Anchor: t0}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.CreateCronJob(job) })
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.CreateCronJob(&hub.CronJob{Name: "daily", Kind: hub.CronCron, Target: "x", Message: "y", CreatedAt: t0, UpdatedAt: t0}); hub.ErrorCode(err) != hub.ECONFLICT {
			t.Errorf("CreateCronJob of a taken name = %v, want ECONFLICT", err)
		}
		return nil
	})
	mustUpdate(t, db, func(tx hub.Tx) error {
		byName, err := tx.CronJobByName("daily")
		if err != nil {
			return err
		}
		byID, err := tx.CronJobByID(job.ID)
		if err != nil {
			return err
		}
		if !same(byName, job) || !same(byID, job) {
			t.Errorf("CronJobByName = %+v, CronJobByID = %+v; want %+v", byName, byID, job)
		}
		due, err := tx.DueCronJobs(t0.Add(time.Hour), 10)
		if len(due) != 1 || due[0].ID != job.ID {
			t.Errorf("DueCronJobs = %v, %v; want the job", due, err)
		}
		job.Enabled, job.ConsecutiveErrors, job.LastRunAt = false, 2, t0.Add(time.Hour)
		if err := tx.UpdateCronJob(job); err != nil {
			return err
		}
		if due, _ := tx.DueCronJobs(t0.Add(time.Hour), 10); len(due) != 0 {
			t.Errorf("DueCronJobs with the job disabled = %v, want none", due)
		}
		for i := range 3 {
			r := &hub.CronRun{JobID: job.ID, JobName: job.Name, ScheduledAt: t0.Add(time.Duration(i) * time.Hour), RanAt: t0,
				Status: hub.CronRunOK, Duration: time.Millisecond, Manual: i == 2}
			if err := tx.InsertCronRun(r); err != nil {
				return err
			}
		}
		runs, err := tx.CronRuns(job.ID, 2)
		if len(runs) != 2 || !runs[0].Manual || runs[0].ID <= runs[1].ID || runs[1].Duration != time.Millisecond {
			t.Errorf("CronRuns(job, 2) = %+v, %v; want the newest 2, newest first", runs, err)
		}
		if err := tx.DeleteCronJob(job.ID); err != nil {
			return err
		}
		if err := tx.DeleteCronJob(job.ID); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("DeleteCronJob twice = %v, want ENOTFOUND", err)
		}
		if runs, _ := tx.CronRuns(0, 10); len(runs) != 3 {
			t.Errorf("runs after deleting the job = %d, want 3 (history stays)", len(runs))
		}
		jobs, err := tx.CronJobs()
		if len(jobs) != 0 {
			t.Errorf("CronJobs after delete = %v", jobs)
		}
		return err
	})
}

// The batched reads and writes of the health sweep and nudge checks give
// what their one-agent forms give.
func testSweep(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	mustUpdate(t, db, func(tx hub.Tx) error {
		dw := &hub.DeepWork{AgentID: ann.ID, Mode: hub.DeepWorkFlexible, PlannedActivity: "x", StartedAt: t0, State: hub.DeepWorkActive}
		if err := tx.InsertDeepWork(dw); err != nil {
			return err
		}
		sa, sb := hub.NewLivenessState(ann.ID, t0), hub.NewLivenessState(bob.ID, t0)
		sa.ActiveDeepWork, sa.HealthKinds = dw, []hub.FindingKind{hub.FindingInactivityAnomaly}
		// bob twice: the last one given is kept.
		sb2 := sb
		sb2.ReflectionDue = true
		if err := tx.SaveLivenessStates([]*hub.LivenessState{&sa, &sb, &sb2}, []time.Time{t0, t0.Add(time.Hour), t0.Add(time.Minute)}); err != nil {
			return err
		}
		due, err := tx.DueHealth(t0.Add(time.Minute), 10)
		if err != nil {
			return err
		}
		if len(due) != 2 || due[0].Agent.ID != ann.ID || due[0].State.ActiveDeepWork == nil || due[0].State.ActiveDeepWork.ID != dw.ID ||
			!slices.Equal(due[0].State.HealthKinds, sa.HealthKinds) || due[1].Agent.ID != bob.ID || !due[1].State.ReflectionDue {
			t.Errorf("DueHealth = %+v", due)
		}
		if err := tx.SetNextEvals([]hub.AgentTime{{AgentID: ann.ID, At: t0.Add(time.Hour)}, {AgentID: bob.ID}}); err != nil {
			return err
		}
		if ids, err := tx.DueLiveness(t0.Add(time.Hour), 10); !slices.Equal(ids, []int64{ann.ID}) || err != nil {
			t.Errorf("DueLiveness after SetNextEvals = %v, %v; want [ann] (bob: never)", ids, err)
		}

		if err := tx.PutAgentChecks([]hub.AgentCheck{{AgentID: ann.ID, NextCheckAt: t0, Episode: "a"}, {AgentID: bob.ID, NextCheckAt: t0.Add(time.Hour)},
			{AgentID: ann.ID, NextCheckAt: t0, Episode: "b", NudgeCount: 1}}); err != nil {
			return err
		}
		if err := tx.ScheduleAgentChecks([]hub.AgentTime{{AgentID: bob.ID, At: t0.Add(time.Minute)}, {AgentID: bob.ID, At: t0.Add(2 * time.Hour)}}); err != nil {
			return err
		}
		m := &hub.Message{From: "bob", Body: "@ann", Mentions: []string{"ann"}, Kind: hub.KindMessage, CreatedAt: t0}
		if err := tx.InsertMessage(m, []hub.Delivery{{AgentID: ann.ID, Mention: true}}); err != nil {
			return err
		}
		nudges, err := tx.DueNudges(t0.Add(time.Minute), 10, nil)
		if err != nil {
			return err
		}
		if len(nudges) != 2 || nudges[0].Agent.ID != ann.ID || nudges[0].Check.Episode != "b" || nudges[0].Check.NudgeCount != 1 ||
			nudges[0].UnreadMentions != 1 || !nudges[0].OldestMention.Equal(t0) || nudges[0].State.ActiveDeepWork == nil ||
			nudges[1].Agent.ID != bob.ID || !nudges[1].Check.NextCheckAt.Equal(t0.Add(time.Minute)) || nudges[1].State == nil || !nudges[1].State.ReflectionDue {
			t.Errorf("DueNudges = %+v", nudges)
		}
		// An agent already read in the transaction is taken as given, with
		// its state; the others are read.
		given := hub.NewLivenessState(ann.ID, t0.Add(-time.Hour))
		annGiven := *ann
		annGiven.DisplayName = "as given"
		nudges, err = tx.DueNudges(t0.Add(time.Minute), 10, map[int64]hub.AgentLiveness{ann.ID: {Agent: &annGiven, State: &given}})
		if err != nil {
			return err
		}
		if len(nudges) != 2 || nudges[0].Agent != &annGiven || nudges[0].State != &given || nudges[0].Check.Episode != "b" || nudges[0].UnreadMentions != 1 ||
			nudges[1].Agent.ID != bob.ID || nudges[1].Agent.Name != "bob" || nudges[1].State == nil || !nudges[1].State.ReflectionDue {
			t.Errorf("DueNudges with ann given = %+v", nudges)
		}
		ms := []*hub.Message{
			{From: hub.SenderOrchestrator, To: []string{"ann"}, Body: "1", Kind: hub.KindNudge, CreatedAt: t0},
			{From: hub.SenderOrchestrator, To: []string{"bob"}, Body: "2", Kind: hub.KindNudge, CreatedAt: t0},
		}
		if err := tx.InsertMessages(ms, [][]hub.Delivery{{{AgentID: ann.ID}}, {{AgentID: bob.ID}}}); err != nil {
			return err
		}
		if ms[0].ID <= m.ID || ms[1].ID != ms[0].ID+1 {
			t.Errorf("InsertMessages IDs = %d, %d after %d; want the next two", ms[0].ID, ms[1].ID, m.ID)
		}
		if got, err := tx.MessageByID(ms[1].ID); err != nil || got.Body != "2" || fmt.Sprint(got.To) != "[bob]" {
			t.Errorf("MessageByID(second of a batch) = %+v, %v", got, err)
		}
		if err := tx.InsertEvents([]hub.Event{{AgentID: ann.ID, Kind: hub.EventNudge, CreatedAt: t0}, {Kind: hub.EventNudge, Detail: "hub", CreatedAt: t0}}); err != nil {
			return err
		}
		evs, err := tx.ListEvents(hub.EventQuery{Kind: hub.EventNudge})
		if len(evs) != 2 || evs[0].AgentName != "ann" || evs[1].AgentID != 0 || evs[1].Detail != "hub" {
			t.Errorf("events = %+v, %v", evs, err)
		}
		return err
	})
}

// same reports whether a and b print the same: equal fields, times in the
// same instant and zone (the stores return times in time.Local).
func same(a, b any) bool { return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b) }
