package storesql

import (
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.CronTx.

const cronJobFrom = `SELECT ` + row.CronJobColumns + ` FROM cron_jobs `

// CreateCronJob implements hub.CronTx. A taken name is reported without
// aborting the transaction.
func (x Statements) CreateCronJob(j *hub.CronJob) error {
	err := x.DB.QueryRow(`INSERT INTO cron_jobs (name, kind, at, every_seconds, anchor, expr, target, message, enabled,
		consecutive_errors, next_run_at, last_run_at, created_at, updated_at, project)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING RETURNING id`,
		j.Name, j.Kind, row.Nanos(j.At), j.EverySeconds, row.Nanos(j.Anchor), j.Expr, j.Target, j.Message, j.Enabled,
		j.ConsecutiveErrors, row.Nanos(j.NextRunAt), row.Nanos(j.LastRunAt), row.Nanos(j.CreatedAt), row.Nanos(j.UpdatedAt), hub.ProjectOr(j.Project)).Scan(&j.ID)
	if x.DB.IsNoRows(err) {
		return hub.CronJobNameTaken(j.Name)
	}
	return err
}

// CronJobByName implements hub.CronTx.
func (x Statements) CronJobByName(name string) (*hub.CronJob, error) {
	j, err := row.CronJob(x.DB.QueryRow(cronJobFrom+`WHERE name = ?`, name))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoCronJobNamed(name)
	}
	return j, err
}

// CronJobByID implements hub.CronTx.
func (x Statements) CronJobByID(id int64) (*hub.CronJob, error) {
	j, err := row.CronJob(x.DB.QueryRow(cronJobFrom+`WHERE id = ?`, id))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoCronJob(id)
	}
	return j, err
}

// CronJobs implements hub.CronTx.
func (x Statements) CronJobs() ([]*hub.CronJob, error) {
	return all(x.DB, row.CronJob, cronJobFrom+`ORDER BY name`)
}

// UpdateCronJob implements hub.CronTx.
func (x Statements) UpdateCronJob(j *hub.CronJob) error {
	n, err := x.DB.Exec(`UPDATE cron_jobs SET kind = ?, at = ?, every_seconds = ?, anchor = ?, expr = ?, target = ?, message = ?,
		enabled = ?, consecutive_errors = ?, next_run_at = ?, last_run_at = ?, updated_at = ? WHERE id = ?`,
		j.Kind, row.Nanos(j.At), j.EverySeconds, row.Nanos(j.Anchor), j.Expr, j.Target, j.Message, j.Enabled,
		j.ConsecutiveErrors, row.Nanos(j.NextRunAt), row.Nanos(j.LastRunAt), row.Nanos(j.UpdatedAt), j.ID)
	if err != nil {
		return err
	}
	if n == 0 {
		return hub.NoCronJobNamed(j.Name)
	}
	return nil
}

// DeleteCronJob implements hub.CronTx.
func (x Statements) DeleteCronJob(id int64) error {
	n, err := x.DB.Exec(`DELETE FROM cron_jobs WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return hub.NoCronJob(id)
	}
	return nil
}

// DueCronJobs implements hub.CronTx.
func (x Statements) DueCronJobs(now time.Time, limit int) ([]*hub.CronJob, error) {
	return all(x.DB, row.CronJob, cronJobFrom+`WHERE enabled = `+x.Dialect.True+` AND next_run_at > 0 AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`,
		row.Nanos(now), limit)
}

// InsertCronRun implements hub.CronTx.
func (x Statements) InsertCronRun(r *hub.CronRun) error {
	err := x.DB.QueryRow(`INSERT INTO cron_runs (job_id, job_name, scheduled_at, ran_at, status, error, duration_ns, manual)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.JobID, r.JobName, row.Nanos(r.ScheduledAt), row.Nanos(r.RanAt), r.Status, r.Error, int64(r.Duration), r.Manual).Scan(&r.ID)
	if err != nil {
		return err
	}
	if r.ID%100 == 0 { // trim now and then; the index makes it cheap
		_, err = x.DB.Exec(`DELETE FROM cron_runs WHERE job_id = ? AND id <= (
			SELECT id FROM cron_runs WHERE job_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`, r.JobID, r.JobID, hub.MaxCronRunsKept)
	}
	return err
}

// CronRuns implements hub.CronTx.
func (x Statements) CronRuns(jobID int64, limit int) ([]*hub.CronRun, error) {
	q := `SELECT id, job_id, job_name, scheduled_at, ran_at, status, error, duration_ns, manual FROM cron_runs`
	var args []any
	if jobID > 0 {
		q, args = q+` WHERE job_id = ?`, append(args, jobID)
	}
	return all(x.DB, func(s row.Scanner) (*hub.CronRun, error) {
		var r hub.CronRun
		var sched, ran, dur int64
		if err := s.Scan(&r.ID, &r.JobID, &r.JobName, &sched, &ran, &r.Status, &r.Error, &dur, &r.Manual); err != nil {
			return nil, err
		}
		r.ScheduledAt, r.RanAt, r.Duration = row.Time(sched), row.Time(ran), time.Duration(dur)
		return &r, nil
	}, q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
}
