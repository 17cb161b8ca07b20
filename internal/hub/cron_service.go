package hub

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// CronTx stores cron jobs and their runs.
type CronTx interface {
	// CreateCronJob inserts j and sets j.ID. ECONFLICT when the name is taken.
	CreateCronJob(j *CronJob) error
	// CronJobByName returns one job. ENOTFOUND.
	CronJobByName(name string) (*CronJob, error)
	// CronJobByID returns one job. ENOTFOUND.
	CronJobByID(id int64) (*CronJob, error)
	// CronJobs returns every job by name.
	CronJobs() ([]*CronJob, error)
	// UpdateCronJob writes every mutable field of j. ENOTFOUND.
	UpdateCronJob(j *CronJob) error
	// DeleteCronJob deletes a job (its runs stay as history). ENOTFOUND.
	DeleteCronJob(id int64) error
	// DueCronJobs returns up to limit enabled jobs whose next run is due at
	// now, the most overdue first.
	DueCronJobs(now time.Time, limit int) ([]*CronJob, error)
	// InsertCronRun stores r and sets r.ID; it keeps the newest
	// MaxCronRunsKept runs of the job and drops older ones.
	InsertCronRun(r *CronRun) error
	// CronRuns returns the newest runs, of one job when jobID > 0,
	// newest first.
	CronRuns(jobID int64, limit int) ([]*CronRun, error)
}

// errNotDue is returned inside a run's transaction when the job changed
// meanwhile (disabled, rescheduled, deleted): nothing is run or recorded.
var errNotDue = errors.New("cron job no longer due")

// CreateCronJob validates and stores a new job. notice is non-empty when
// the job is accepted but will not do what one may expect: an "at" time in
// the past (it never runs) or a target agent that does not exist yet (runs
// fail until it does). Errors: EINVALID, ECONFLICT.
func (s *Schedule) CreateCronJob(ctx context.Context, j CronJob) (*CronJob, string, error) {
	now := s.clock.Now()
	j, notice, err := PrepareCronJob(j, now, s.cfg.Location)
	if err != nil {
		return nil, "", err
	}
	if err := checkWrappedText(fmt.Sprintf("cron job %q: the message", j.Name), len(j.Message), s.cfg.MaxBodyBytes); err != nil {
		return nil, "", err
	}
	j.Project = ProjectOr(j.Project)
	if err := ValidateProjectName(j.Project); err != nil {
		return nil, "", err
	}
	err = update(ctx, s.store, func(tx scheduleTx) error {
		if err := requireProject(tx, j.Project); err != nil {
			return err
		}
		if notice == "" {
			notice = targetNotice(tx, j.Project, j.Target)
		}
		if notice == "" {
			notice = tickNotice(j, tickInterval(tx))
		}
		return tx.CreateCronJob(&j)
	})
	if err != nil {
		return nil, "", err
	}
	return &j, notice, nil
}

// tickNotice says when an "every" period is shorter than the orchestrator
// tick: the job then fires once per tick, not once per period.
func tickNotice(j CronJob, tick time.Duration) string {
	if j.Kind != CronEvery || time.Duration(j.EverySeconds)*time.Second >= tick {
		return ""
	}
	return fmt.Sprintf("a period of %ds is shorter than the orchestrator tick (%s): the job fires once per tick, every %s",
		j.EverySeconds, tick, tick)
}

// targetNoticeTx is what targetNotice reads and writes.
type targetNoticeTx interface {
	// AgentTx
	AgentByName(name string) (*Agent, error)
	// MessageTx
	ChannelByName(project, name string) (int64, error)
}

// targetNotice says when a job's target cannot receive messages now.
func targetNotice(tx targetNoticeTx, project, target string) string {
	if IsChannelTarget(target) {
		if _, err := tx.ChannelByName(project, target); ErrorCode(err) == ENOTFOUND {
			return fmt.Sprintf("channel %s does not exist yet: runs fail until an agent joins it", target)
		}
		return ""
	}
	a, err := tx.AgentByName(target)
	switch {
	case ErrorCode(err) == ENOTFOUND:
		return fmt.Sprintf("agent %q does not exist yet: runs fail until it is created", target)
	case err == nil && a.Disabled():
		return fmt.Sprintf("agent %q is disabled: runs fail until it is enabled", target)
	case err == nil && ProjectOr(a.Project) != project:
		return fmt.Sprintf("agent %q is in project %s, not %s: runs fail (a job reaches only its own project)", target, ProjectOr(a.Project), project)
	}
	return ""
}

// ListCronJobs returns every job, by name.
func (s *Schedule) ListCronJobs(ctx context.Context) ([]*CronJob, error) {
	var js []*CronJob
	err := view(ctx, s.store, func(tx scheduleTx) (err error) {
		js, err = tx.CronJobs()
		return err
	})
	return js, err
}

// DeleteCronJob removes the job named name; its runs stay as history,
// still listed under its name by ListCronRuns. Errors: ENOTFOUND.
func (s *Schedule) DeleteCronJob(ctx context.Context, name string) error {
	return update(ctx, s.store, func(tx scheduleTx) error {
		j, err := tx.CronJobByName(name)
		if err != nil {
			return err
		}
		if err := tx.SetMeta(metaRemovedCronJob+name, strconv.FormatInt(j.ID, 10)); err != nil {
			return err
		}
		return tx.DeleteCronJob(j.ID)
	})
}

// metaRemovedCronJob + a job's name keeps the ID of the job of that name
// last removed, so that its runs can still be listed by name.
const metaRemovedCronJob = "cron_removed:"

// cronJobIDTx is what cronJobID reads and writes.
type cronJobIDTx interface {
	// CronTx
	CronJobByName(name string) (*CronJob, error)
	// MetaTx
	Meta(key string) (string, error)
}

// cronJobID returns the ID of the job named name, or of the job of that
// name last removed. Errors: ENOTFOUND.
func cronJobID(tx cronJobIDTx, name string) (int64, error) {
	j, err := tx.CronJobByName(name)
	if ErrorCode(err) != ENOTFOUND {
		if err != nil {
			return 0, err
		}
		return j.ID, nil
	}
	if v, merr := tx.Meta(metaRemovedCronJob + name); merr == nil && v != "" {
		if id, perr := strconv.ParseInt(v, 10, 64); perr == nil {
			return id, nil
		}
	}
	return 0, err
}

// SetCronJobEnabled enables or disables the job named name. Enabling
// resets its error count and schedules it from now: slots that passed while
// it was disabled do not fire. Errors: ENOTFOUND.
func (s *Schedule) SetCronJobEnabled(ctx context.Context, name string, enabled bool) (*CronJob, error) {
	now := s.clock.Now()
	var out *CronJob
	err := update(ctx, s.store, func(tx scheduleTx) error {
		j, err := tx.CronJobByName(name)
		if err != nil {
			return err
		}
		var nj CronJob
		if enabled {
			nj = EnableCronJob(*j, now, s.cfg.Location)
		} else {
			nj = DisableCronJob(*j, now)
		}
		out = &nj
		return tx.UpdateCronJob(out)
	})
	return out, err
}

// RunCronJob runs the job named name now, whether or not it is enabled or
// due; its schedule is unchanged. The run is recorded and counts for the
// error policy. Errors: ENOTFOUND.
func (s *Schedule) RunCronJob(ctx context.Context, name string) (*CronRun, error) {
	var j *CronJob
	err := view(ctx, s.store, func(tx scheduleTx) (err error) {
		j, err = tx.CronJobByName(name)
		return err
	})
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	return s.runCronJob(ctx, j.ID, now, now, true)
}

// ListCronRuns returns the newest runs (default 50), of the job named job
// (the current one, or else the one of that name last removed) or of every
// job when it is empty, newest first. Errors: ENOTFOUND, EINVALID.
func (s *Schedule) ListCronRuns(ctx context.Context, job string, limit int) ([]*CronRun, error) {
	limit, err := s.limit(limit, 50)
	if err != nil {
		return nil, err
	}
	var rs []*CronRun
	err = view(ctx, s.store, func(tx scheduleTx) error {
		var id int64
		if job != "" {
			var err error
			if id, err = cronJobID(tx, job); err != nil {
				return err
			}
		}
		rs, err = tx.CronRuns(id, limit)
		return err
	})
	return rs, err
}

// RunDueCronJobs runs the jobs due at now, up to limit, each once however
// many of its slots passed (the missed-run policy), and returns how many
// ran. A run that fails is recorded as such and counts towards disabling
// the job; the error returned is for failures to record runs.
func (s *Schedule) RunDueCronJobs(ctx context.Context, now time.Time, limit int) (int, error) {
	var due []*CronJob
	err := view(ctx, s.store, func(tx scheduleTx) (err error) {
		due, err = tx.DueCronJobs(now, limit)
		return err
	})
	if err != nil {
		return 0, err
	}
	// Jobs run concurrently so that the store groups their writes into few
	// commits (many jobs share a slot such as 09:00).
	var (
		mu    sync.Mutex
		errs  []error
		n     int
		wg    sync.WaitGroup
		slots = make(chan struct{}, 16)
	)
	for _, j := range due {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			_, err := s.runCronJob(ctx, j.ID, j.NextRunAt, now, false)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, errNotDue):
			case err != nil:
				errs = append(errs, fmt.Errorf("cron job %s: %w", j.Name, err))
			default:
				n++
			}
		}()
	}
	wg.Wait()
	return n, errors.Join(errs...)
}

// runCronJob runs job id for the slot scheduledAt at now and records the
// run. The message and the run record commit together; when posting fails,
// the failure is recorded in a second transaction.
func (s *Schedule) runCronJob(ctx context.Context, id int64, scheduledAt, now time.Time, manual bool) (*CronRun, error) {
	began := s.clock.Now() // a duration, measured on the monotonic clock (of the system clock)
	var run *CronRun
	err := update(ctx, s.store, func(tx scheduleTx) error {
		j, err := tx.CronJobByID(id)
		if ErrorCode(err) == ENOTFOUND && !manual {
			return errNotDue
		} else if err != nil {
			return err
		}
		if !manual && (!CronDue(*j, now) || !j.NextRunAt.Equal(scheduledAt)) {
			return errNotDue
		}
		if err := s.postCron(tx, j, now); err != nil {
			return err
		}
		run = &CronRun{JobID: j.ID, JobName: j.Name, ScheduledAt: scheduledAt, RanAt: now, Status: CronRunOK, Duration: s.clock.Now().Sub(began), Manual: manual}
		return s.recordCronRun(tx, j, run)
	})
	if err == nil {
		return run, nil
	}
	if errors.Is(err, errNotDue) || ctx.Err() != nil {
		return nil, err
	}
	// The post failed (target missing or disabled, store error): record it.
	failure := err
	err = update(ctx, s.store, func(tx scheduleTx) error {
		j, err := tx.CronJobByID(id)
		if err != nil {
			return err
		}
		run = &CronRun{JobID: j.ID, JobName: j.Name, ScheduledAt: scheduledAt, RanAt: now, Status: CronRunError,
			Error: ErrorMessage(failure), Duration: s.clock.Now().Sub(began), Manual: manual}
		if ErrorCode(failure) == EINTERNAL {
			run.Error = failure.Error()
		}
		return s.recordCronRun(tx, j, run)
	})
	if err != nil {
		return nil, errors.Join(failure, fmt.Errorf("record failed run: %w", err))
	}
	return run, nil
}

// recordCronRunTx is what recordCronRun reads and writes.
type recordCronRunTx interface {
	// AgentTx
	AgentByName(name string) (*Agent, error)
	// CronTx
	InsertCronRun(r *CronRun) error
	UpdateCronJob(j *CronJob) error
	// EventTx
	InsertEvent(e *Event) error
}

// recordCronRun applies run to j (error policy, next slot) and stores both.
func (s *Schedule) recordCronRun(tx recordCronRunTx, j *CronJob, run *CronRun) error {
	nj, disabled := ApplyCronRun(*j, *run, s.cfg.Location)
	if err := tx.UpdateCronJob(&nj); err != nil {
		return err
	}
	if err := tx.InsertCronRun(run); err != nil {
		return err
	}
	if disabled {
		var agentID int64
		if !IsChannelTarget(j.Target) {
			if a, err := tx.AgentByName(j.Target); err == nil {
				agentID = a.ID
			}
		}
		return recordEvent(tx, agentID, EventCronDisabled,
			fmt.Sprintf("cron job %q disabled after %d consecutive errors; last: %s (enable it with `hubctl cron enable %s`)",
				j.Name, nj.ConsecutiveErrors, run.Error, j.Name), run.RanAt)
	}
	return nil
}

// postCronTx is what postCron reads and writes.
type postCronTx interface {
	routeTx // the post (Messages.Route)
	// AgentTx
	AgentByName(name string) (*Agent, error)
}

// postCron posts job j's message to its target inside tx. The target must
// exist and be able to receive.
func (s *Schedule) postCron(tx postCronTx, j *CronJob, now time.Time) error {
	body := "[cron " + j.Name + "] " + j.Message
	req := PostRequest{Body: body, Kind: KindCron}
	if IsChannelTarget(j.Target) {
		if _, err := tx.ChannelByName(ProjectOr(j.Project), j.Target); ErrorCode(err) == ENOTFOUND {
			return Errorf(EPRECONDITION, "channel %s does not exist (no agent has joined it)", cronChannel(j))
		} else if err != nil {
			return err
		}
		req.Channel = j.Target
	} else {
		a, err := tx.AgentByName(j.Target)
		if ErrorCode(err) == ENOTFOUND {
			return Errorf(EPRECONDITION, "target agent %q does not exist", j.Target)
		} else if err != nil {
			return err
		}
		if a.Disabled() {
			return Errorf(EPRECONDITION, "target agent %q is disabled", j.Target)
		}
		if ProjectOr(a.Project) != ProjectOr(j.Project) {
			return Errorf(EPRECONDITION, "target agent %q is not in the job's project %s", j.Target, ProjectOr(j.Project))
		}
		req.To = []string{a.Name}
	}
	if err := s.messages.ValidatePost(&req); err != nil {
		return err
	}
	m := &Message{Project: ProjectOr(j.Project), From: SenderOrchestrator, SenderKind: ByHub, Channel: req.Channel, Body: req.Body, Kind: req.Kind, CreatedAt: now, Priority: req.Priority}
	return s.messages.Route(tx, nil, m, req, now)
}

// MaxCronRunsKept is how many runs of each job the store keeps.
const MaxCronRunsKept = 10000

// cronChannel names a job's target channel as people read it: qualified
// by the job's project unless that is the default one.
func cronChannel(j *CronJob) string {
	if p := ProjectOr(j.Project); p != DefaultProject {
		return ChannelRef{Project: p, Name: j.Target}.String()
	}
	return j.Target
}
