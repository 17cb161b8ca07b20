package postgres

import (
	"errors"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.CronTx.

func (t *Tx) cronJobs(q string, args ...any) ([]*hub.CronJob, error) {
	rows, err := t.query(`SELECT `+row.CronJobColumns+` FROM cron_jobs `+q, args...)
	return scanRows(rows, err, func(r pgx.Rows) (*hub.CronJob, error) { return row.CronJob(r) })
}

// CreateCronJob implements hub.CronTx.
func (t *Tx) CreateCronJob(j *hub.CronJob) error {
	err := t.queryRow(`INSERT INTO cron_jobs (name, kind, at, every_seconds, anchor, expr, target, message, enabled,
		consecutive_errors, next_run_at, last_run_at, created_at, updated_at, project)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT (name) DO NOTHING RETURNING id`,
		j.Name, j.Kind, row.Nanos(j.At), j.EverySeconds, row.Nanos(j.Anchor), j.Expr, j.Target, j.Message, j.Enabled,
		j.ConsecutiveErrors, row.Nanos(j.NextRunAt), row.Nanos(j.LastRunAt), row.Nanos(j.CreatedAt), row.Nanos(j.UpdatedAt), hub.ProjectOr(j.Project)).Scan(&j.ID)
	if errors.Is(err, pgx.ErrNoRows) { // the name is taken; the transaction goes on
		return hub.CronJobNameTaken(j.Name)
	}
	return err
}

// CronJobByName implements hub.CronTx.
func (t *Tx) CronJobByName(name string) (*hub.CronJob, error) {
	j, err := row.CronJob(t.queryRow(`SELECT `+row.CronJobColumns+` FROM cron_jobs WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.NoCronJobNamed(name)
	}
	return j, err
}

// CronJobByID implements hub.CronTx.
func (t *Tx) CronJobByID(id int64) (*hub.CronJob, error) {
	j, err := row.CronJob(t.queryRow(`SELECT `+row.CronJobColumns+` FROM cron_jobs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.NoCronJob(id)
	}
	return j, err
}

// ListCronJobs implements hub.CronTx.
func (t *Tx) ListCronJobs() ([]*hub.CronJob, error) { return t.cronJobs(`ORDER BY name`) }

// UpdateCronJob implements hub.CronTx.
func (t *Tx) UpdateCronJob(j *hub.CronJob) error {
	tag, err := t.exec(`UPDATE cron_jobs SET kind = $1, at = $2, every_seconds = $3, anchor = $4, expr = $5, target = $6, message = $7,
		enabled = $8, consecutive_errors = $9, next_run_at = $10, last_run_at = $11, updated_at = $12 WHERE id = $13`,
		j.Kind, row.Nanos(j.At), j.EverySeconds, row.Nanos(j.Anchor), j.Expr, j.Target, j.Message, j.Enabled,
		j.ConsecutiveErrors, row.Nanos(j.NextRunAt), row.Nanos(j.LastRunAt), row.Nanos(j.UpdatedAt), j.ID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return hub.NoCronJobNamed(j.Name)
	}
	return nil
}

// DeleteCronJob implements hub.CronTx.
func (t *Tx) DeleteCronJob(id int64) error {
	tag, err := t.exec(`DELETE FROM cron_jobs WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return hub.NoCronJob(id)
	}
	return nil
}

// DueCronJobs implements hub.CronTx.
func (t *Tx) DueCronJobs(now time.Time, limit int) ([]*hub.CronJob, error) {
	return t.cronJobs(`WHERE enabled AND next_run_at > 0 AND next_run_at <= $1 ORDER BY next_run_at LIMIT $2`, row.Nanos(now), limit)
}

// InsertCronRun implements hub.CronTx. ECONFLICT when the job's slot
// already has a scheduled run (cron_runs_once).
func (t *Tx) InsertCronRun(r *hub.CronRun) error {
	err := t.queryRow(`INSERT INTO cron_runs (job_id, job_name, scheduled_at, ran_at, status, error, duration_ns, manual)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		r.JobID, r.JobName, row.Nanos(r.ScheduledAt), row.Nanos(r.RanAt), r.Status, r.Error, int64(r.Duration), r.Manual).Scan(&r.ID)
	if err != nil {
		return err
	}
	if r.ID%100 == 0 { // trim now and then; the index makes it cheap
		_, err = t.exec(`DELETE FROM cron_runs WHERE job_id = $1 AND id <= (
			SELECT id FROM cron_runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`, r.JobID, hub.MaxCronRunsKept)
	}
	return err
}

// ListCronRuns implements hub.CronTx.
func (t *Tx) ListCronRuns(jobID int64, limit int) ([]*hub.CronRun, error) {
	rows, err := t.query(`SELECT id, job_id, job_name, scheduled_at, ran_at, status, error, duration_ns, manual FROM cron_runs
		WHERE $1::bigint <= 0 OR job_id = $1 ORDER BY id DESC LIMIT $2`, jobID, limit)
	return scanRows(rows, err, func(rs pgx.Rows) (*hub.CronRun, error) {
		var r hub.CronRun
		var sched, ran, dur int64
		if err := rs.Scan(&r.ID, &r.JobID, &r.JobName, &sched, &ran, &r.Status, &r.Error, &dur, &r.Manual); err != nil {
			return nil, err
		}
		r.ScheduledAt, r.RanAt, r.Duration = row.Time(sched), row.Time(ran), time.Duration(dur)
		return &r, nil
	})
}
