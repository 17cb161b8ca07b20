package sqlite

import (
	"database/sql"
	"errors"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

func (t *Tx) cronJobs(q string, args ...any) ([]*hub.CronJob, error) {
	rows, err := t.query(`SELECT `+row.CronJobColumns+` FROM cron_jobs `+q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*hub.CronJob
	for rows.Next() {
		j, err := row.CronJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// CreateCronJob implements hub.CronTx.
func (t *Tx) CreateCronJob(j *hub.CronJob) error {
	res, err := t.exec(`INSERT INTO cron_jobs (name, kind, at, every_seconds, anchor, expr, target, message, enabled,
		consecutive_errors, next_run_at, last_run_at, created_at, updated_at, project) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.Name, j.Kind, row.Nanos(j.At), j.EverySeconds, row.Nanos(j.Anchor), j.Expr, j.Target, j.Message, boolInt(j.Enabled),
		j.ConsecutiveErrors, row.Nanos(j.NextRunAt), row.Nanos(j.LastRunAt), row.Nanos(j.CreatedAt), row.Nanos(j.UpdatedAt), hub.ProjectOr(j.Project))
	if hub.ErrorCode(err) == hub.ECONFLICT {
		return hub.CronJobNameTaken(j.Name)
	} else if err != nil {
		return err
	}
	j.ID, err = res.LastInsertId()
	return err
}

// CronJobByName implements hub.CronTx.
func (t *Tx) CronJobByName(name string) (*hub.CronJob, error) {
	j, err := row.CronJob(t.queryRow(`SELECT `+row.CronJobColumns+` FROM cron_jobs WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hub.NoCronJobNamed(name)
	}
	return j, err
}

// CronJobByID implements hub.CronTx.
func (t *Tx) CronJobByID(id int64) (*hub.CronJob, error) {
	j, err := row.CronJob(t.queryRow(`SELECT `+row.CronJobColumns+` FROM cron_jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hub.NoCronJob(id)
	}
	return j, err
}

// ListCronJobs implements hub.CronTx.
func (t *Tx) ListCronJobs() ([]*hub.CronJob, error) { return t.cronJobs(`ORDER BY name`) }

// UpdateCronJob implements hub.CronTx.
func (t *Tx) UpdateCronJob(j *hub.CronJob) error {
	res, err := t.exec(`UPDATE cron_jobs SET kind = ?, at = ?, every_seconds = ?, anchor = ?, expr = ?, target = ?, message = ?,
		enabled = ?, consecutive_errors = ?, next_run_at = ?, last_run_at = ?, updated_at = ? WHERE id = ?`,
		j.Kind, row.Nanos(j.At), j.EverySeconds, row.Nanos(j.Anchor), j.Expr, j.Target, j.Message, boolInt(j.Enabled),
		j.ConsecutiveErrors, row.Nanos(j.NextRunAt), row.Nanos(j.LastRunAt), row.Nanos(j.UpdatedAt), j.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return hub.NoCronJobNamed(j.Name)
	}
	return nil
}

// DeleteCronJob implements hub.CronTx.
func (t *Tx) DeleteCronJob(id int64) error {
	res, err := t.exec(`DELETE FROM cron_jobs WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return hub.NoCronJob(id)
	}
	return nil
}

// DueCronJobs implements hub.CronTx.
func (t *Tx) DueCronJobs(now time.Time, limit int) ([]*hub.CronJob, error) {
	return t.cronJobs(`WHERE enabled = 1 AND next_run_at > 0 AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`, row.Nanos(now), limit)
}

// InsertCronRun implements hub.CronTx.
func (t *Tx) InsertCronRun(r *hub.CronRun) error {
	res, err := t.exec(`INSERT INTO cron_runs (job_id, job_name, scheduled_at, ran_at, status, error, duration_ns, manual)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		r.JobID, r.JobName, row.Nanos(r.ScheduledAt), row.Nanos(r.RanAt), r.Status, r.Error, int64(r.Duration), boolInt(r.Manual))
	if err != nil {
		return err
	}
	if r.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	if r.ID%100 == 0 { // trim now and then; the index makes it cheap
		_, err = t.exec(`DELETE FROM cron_runs WHERE job_id = ? AND id <= (
			SELECT id FROM cron_runs WHERE job_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`, r.JobID, r.JobID, hub.MaxCronRunsKept)
	}
	return err
}

// ListCronRuns implements hub.CronTx.
func (t *Tx) ListCronRuns(jobID int64, limit int) ([]*hub.CronRun, error) {
	q := `SELECT id, job_id, job_name, scheduled_at, ran_at, status, error, duration_ns, manual FROM cron_runs`
	args := []any{}
	if jobID > 0 {
		q += ` WHERE job_id = ?`
		args = append(args, jobID)
	}
	rows, err := t.query(q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*hub.CronRun
	for rows.Next() {
		var r hub.CronRun
		var sched, ran, dur int64
		if err := rows.Scan(&r.ID, &r.JobID, &r.JobName, &sched, &ran, &r.Status, &r.Error, &dur, &r.Manual); err != nil {
			return nil, err
		}
		r.ScheduledAt, r.RanAt, r.Duration = row.Time(sched), row.Time(ran), time.Duration(dur)
		out = append(out, &r)
	}
	return out, rows.Err()
}
