package postgres

import (
	"errors"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.ScheduleTx: the orchestrator's tables of
// migration 0003 (agent_checks, pulses, cron_jobs, cron_runs).

// DueAgentChecks implements hub.ScheduleTx.
func (t *Tx) DueAgentChecks(now time.Time, limit int) ([]int64, error) {
	return queryColumn[int64](t, `SELECT agent_id FROM agent_checks WHERE next_check_at > 0 AND next_check_at <= $1
		ORDER BY next_check_at LIMIT $2`, toNanos(now), limit)
}

// AgentCheck implements hub.ScheduleTx.
func (t *Tx) AgentCheck(agentID int64) (hub.AgentCheck, error) {
	c := hub.AgentCheck{AgentID: agentID}
	var next, last int64
	err := t.queryRow(`SELECT next_check_at, episode, nudge_count, last_nudge_at FROM agent_checks WHERE agent_id = $1`, agentID).
		Scan(&next, &c.Episode, &c.NudgeCount, &last)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, nil
	} else if err != nil {
		return c, err
	}
	c.NextCheckAt, c.LastNudgeAt = fromNanos(next), fromNanos(last)
	return c, nil
}

// PutAgentCheck implements hub.ScheduleTx.
func (t *Tx) PutAgentCheck(c hub.AgentCheck) error { return t.PutAgentChecks([]hub.AgentCheck{c}) }

// ScheduleAgentCheck implements hub.ScheduleTx.
func (t *Tx) ScheduleAgentCheck(agentID int64, at time.Time) error {
	return t.ScheduleAgentChecks([]hub.AgentTime{{AgentID: agentID, At: at}})
}

// MentionsAfter implements hub.ScheduleTx. It walks the mention deliveries
// by message ID (deliveries_mention), so its cost is that of the new ones.
func (t *Tx) MentionsAfter(afterID int64, limit int) ([]hub.MentionDelivery, error) {
	rows, err := t.query(`SELECT d.agent_id, d.message_id, m.created_at FROM deliveries d JOIN messages m ON m.id = d.message_id
		WHERE d.message_id > $1 AND d.mention AND m.sender <> $2 ORDER BY d.message_id LIMIT $3`, afterID, hub.SenderOrchestrator, limit)
	return scanRows(rows, err, func(r pgx.Rows) (hub.MentionDelivery, error) {
		var d hub.MentionDelivery
		var created int64
		err := r.Scan(&d.AgentID, &d.MessageID, &created)
		d.CreatedAt = fromNanos(created)
		return d, err
	})
}

// UnreadMentions implements hub.ScheduleTx.
func (t *Tx) UnreadMentions(agentID, readUpTo int64) (int64, time.Time, error) {
	var n, oldest int64
	err := t.queryRow(`SELECT COUNT(*), COALESCE(MIN(m.created_at), 0) FROM deliveries d JOIN messages m ON m.id = d.message_id
		WHERE d.agent_id = $1 AND d.message_id > $2 AND d.mention AND m.sender <> $3`, agentID, readUpTo, hub.SenderOrchestrator).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, fromNanos(oldest), nil
}

const pulseColumns = `p.agent_id, a.name, p.enabled, p.interval_ns, p.active_hours, p.time_zone, p.instructions, p.output_channel, p.updated_at,
	p.last_pulse_at, p.unanswered, p.last_output, p.last_outcome, p.last_respond_at, p.pulse_count, p.last_reason, p.last_checked_at, p.next_check_at`

func scanPulse(s scanner) (*hub.Pulse, error) {
	var p hub.Pulse
	var interval, updated, lastPulse, lastRespond, lastChecked, next int64
	c, st := &p.Config, &p.State
	err := s.Scan(&c.AgentID, &p.AgentName, &c.Enabled, &interval, &c.ActiveHours, &c.TimeZone, &c.Instructions, &c.OutputChannel, &updated,
		&lastPulse, &st.Unanswered, &st.LastOutput, &st.LastOutcome, &lastRespond, &st.PulseCount, &st.LastReason, &lastChecked, &next)
	if err != nil {
		return nil, err
	}
	st.AgentID = c.AgentID
	c.Interval, c.UpdatedAt = time.Duration(interval), fromNanos(updated)
	st.LastPulseAt, st.LastRespondAt, st.LastCheckedAt = fromNanos(lastPulse), fromNanos(lastRespond), fromNanos(lastChecked)
	p.NextCheckAt = fromNanos(next)
	return &p, nil
}

// PutPulseConfig implements hub.ScheduleTx.
func (t *Tx) PutPulseConfig(c hub.PulseConfig, nextCheckAt time.Time) error {
	_, err := t.exec(`INSERT INTO pulses (agent_id, enabled, interval_ns, active_hours, time_zone, instructions, output_channel, updated_at, next_check_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (agent_id) DO UPDATE SET enabled = excluded.enabled, interval_ns = excluded.interval_ns,
			active_hours = excluded.active_hours, time_zone = excluded.time_zone, instructions = excluded.instructions,
			output_channel = excluded.output_channel, updated_at = excluded.updated_at, next_check_at = excluded.next_check_at`,
		c.AgentID, c.Enabled, int64(c.Interval), c.ActiveHours, c.TimeZone, c.Instructions, c.OutputChannel,
		toNanos(c.UpdatedAt), toNanos(nextCheckAt))
	return err
}

// Pulse implements hub.ScheduleTx.
func (t *Tx) Pulse(agentID int64) (*hub.Pulse, error) {
	p, err := scanPulse(t.queryRow(`SELECT `+pulseColumns+` FROM pulses p JOIN agents a ON a.id = p.agent_id WHERE p.agent_id = $1`, agentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.Errorf(hub.ENOTFOUND, "no pulse is configured for this agent")
	}
	return p, err
}

// ListPulses implements hub.ScheduleTx.
func (t *Tx) ListPulses() ([]*hub.Pulse, error) {
	rows, err := t.query(`SELECT ` + pulseColumns + ` FROM pulses p JOIN agents a ON a.id = p.agent_id ORDER BY a.name`)
	return scanRows(rows, err, func(r pgx.Rows) (*hub.Pulse, error) { return scanPulse(r) })
}

// DuePulses implements hub.ScheduleTx.
func (t *Tx) DuePulses(now time.Time, limit int) ([]int64, error) {
	return queryColumn[int64](t, `SELECT agent_id FROM pulses WHERE enabled AND next_check_at > 0 AND next_check_at <= $1
		ORDER BY next_check_at LIMIT $2`, toNanos(now), limit)
}

// PutPulseState implements hub.ScheduleTx.
func (t *Tx) PutPulseState(st hub.PulseState, nextCheckAt time.Time) error {
	tag, err := t.exec(`UPDATE pulses SET last_pulse_at = $1, unanswered = $2, last_output = $3, last_outcome = $4, last_respond_at = $5,
		pulse_count = $6, last_reason = $7, last_checked_at = $8, next_check_at = $9 WHERE agent_id = $10`,
		toNanos(st.LastPulseAt), st.Unanswered, st.LastOutput, st.LastOutcome, toNanos(st.LastRespondAt),
		st.PulseCount, st.LastReason, toNanos(st.LastCheckedAt), toNanos(nextCheckAt), st.AgentID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return hub.Errorf(hub.ENOTFOUND, "no pulse is configured for this agent")
	}
	return nil
}

const cronJobColumns = `id, name, kind, at, every_seconds, anchor, expr, target, message, enabled, consecutive_errors,
	next_run_at, last_run_at, created_at, updated_at`

func scanCronJob(s scanner) (*hub.CronJob, error) {
	var j hub.CronJob
	var at, anchor, next, last, created, updated int64
	err := s.Scan(&j.ID, &j.Name, &j.Kind, &at, &j.EverySeconds, &anchor, &j.Expr, &j.Target, &j.Message, &j.Enabled,
		&j.ConsecutiveErrors, &next, &last, &created, &updated)
	if err != nil {
		return nil, err
	}
	j.At, j.Anchor, j.NextRunAt, j.LastRunAt = fromNanos(at), fromNanos(anchor), fromNanos(next), fromNanos(last)
	j.CreatedAt, j.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &j, nil
}

func (t *Tx) cronJobs(q string, args ...any) ([]*hub.CronJob, error) {
	rows, err := t.query(`SELECT `+cronJobColumns+` FROM cron_jobs `+q, args...)
	return scanRows(rows, err, func(r pgx.Rows) (*hub.CronJob, error) { return scanCronJob(r) })
}

// CreateCronJob implements hub.ScheduleTx.
func (t *Tx) CreateCronJob(j *hub.CronJob) error {
	err := t.queryRow(`INSERT INTO cron_jobs (name, kind, at, every_seconds, anchor, expr, target, message, enabled,
		consecutive_errors, next_run_at, last_run_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (name) DO NOTHING RETURNING id`,
		j.Name, j.Kind, toNanos(j.At), j.EverySeconds, toNanos(j.Anchor), j.Expr, j.Target, j.Message, j.Enabled,
		j.ConsecutiveErrors, toNanos(j.NextRunAt), toNanos(j.LastRunAt), toNanos(j.CreatedAt), toNanos(j.UpdatedAt)).Scan(&j.ID)
	if errors.Is(err, pgx.ErrNoRows) { // the name is taken; the transaction goes on
		return hub.Errorf(hub.ECONFLICT, "a cron job named %q already exists: choose another name or remove it with `hubctl cron rm %s`", j.Name, j.Name)
	}
	return err
}

// CronJobByName implements hub.ScheduleTx.
func (t *Tx) CronJobByName(name string) (*hub.CronJob, error) {
	j, err := scanCronJob(t.queryRow(`SELECT `+cronJobColumns+` FROM cron_jobs WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.Errorf(hub.ENOTFOUND, "no cron job named %q: list them with `hubctl cron list`", name)
	}
	return j, err
}

// CronJobByID implements hub.ScheduleTx.
func (t *Tx) CronJobByID(id int64) (*hub.CronJob, error) {
	j, err := scanCronJob(t.queryRow(`SELECT `+cronJobColumns+` FROM cron_jobs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.Errorf(hub.ENOTFOUND, "no cron job with ID %d", id)
	}
	return j, err
}

// ListCronJobs implements hub.ScheduleTx.
func (t *Tx) ListCronJobs() ([]*hub.CronJob, error) { return t.cronJobs(`ORDER BY name`) }

// UpdateCronJob implements hub.ScheduleTx.
func (t *Tx) UpdateCronJob(j *hub.CronJob) error {
	tag, err := t.exec(`UPDATE cron_jobs SET kind = $1, at = $2, every_seconds = $3, anchor = $4, expr = $5, target = $6, message = $7,
		enabled = $8, consecutive_errors = $9, next_run_at = $10, last_run_at = $11, updated_at = $12 WHERE id = $13`,
		j.Kind, toNanos(j.At), j.EverySeconds, toNanos(j.Anchor), j.Expr, j.Target, j.Message, j.Enabled,
		j.ConsecutiveErrors, toNanos(j.NextRunAt), toNanos(j.LastRunAt), toNanos(j.UpdatedAt), j.ID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return hub.Errorf(hub.ENOTFOUND, "no cron job named %q", j.Name)
	}
	return nil
}

// DeleteCronJob implements hub.ScheduleTx.
func (t *Tx) DeleteCronJob(id int64) error {
	tag, err := t.exec(`DELETE FROM cron_jobs WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return hub.Errorf(hub.ENOTFOUND, "no cron job with ID %d", id)
	}
	return nil
}

// DueCronJobs implements hub.ScheduleTx.
func (t *Tx) DueCronJobs(now time.Time, limit int) ([]*hub.CronJob, error) {
	return t.cronJobs(`WHERE enabled AND next_run_at > 0 AND next_run_at <= $1 ORDER BY next_run_at LIMIT $2`, toNanos(now), limit)
}

// InsertCronRun implements hub.ScheduleTx.
func (t *Tx) InsertCronRun(r *hub.CronRun) error {
	err := t.queryRow(`INSERT INTO cron_runs (job_id, job_name, scheduled_at, ran_at, status, error, duration_ns, manual)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		r.JobID, r.JobName, toNanos(r.ScheduledAt), toNanos(r.RanAt), r.Status, r.Error, int64(r.Duration), r.Manual).Scan(&r.ID)
	if err != nil {
		return err
	}
	if r.ID%100 == 0 { // trim now and then; the index makes it cheap
		_, err = t.exec(`DELETE FROM cron_runs WHERE job_id = $1 AND id <= (
			SELECT id FROM cron_runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`, r.JobID, hub.MaxCronRunsKept)
	}
	return err
}

// ListCronRuns implements hub.ScheduleTx.
func (t *Tx) ListCronRuns(jobID int64, limit int) ([]*hub.CronRun, error) {
	rows, err := t.query(`SELECT id, job_id, job_name, scheduled_at, ran_at, status, error, duration_ns, manual FROM cron_runs
		WHERE $1::bigint <= 0 OR job_id = $1 ORDER BY id DESC LIMIT $2`, jobID, limit)
	return scanRows(rows, err, func(rs pgx.Rows) (*hub.CronRun, error) {
		var r hub.CronRun
		var sched, ran, dur int64
		if err := rs.Scan(&r.ID, &r.JobID, &r.JobName, &sched, &ran, &r.Status, &r.Error, &dur, &r.Manual); err != nil {
			return nil, err
		}
		r.ScheduledAt, r.RanAt, r.Duration = fromNanos(sched), fromNanos(ran), time.Duration(dur)
		return &r, nil
	})
}
