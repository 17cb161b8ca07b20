package hub

import (
	"context"
	"time"
)

// ActivityTx stores activity logs and checkpoints.
type ActivityTx interface {
	// InsertActivityLog inserts l and sets l.ID.
	InsertActivityLog(l *ActivityLog) error
	// InsertCheckpoint inserts c and sets c.ID.
	InsertCheckpoint(c *Checkpoint) error
	// RecentActivityLogs returns the agent's newest activity logs, newest
	// first, at most limit.
	RecentActivityLogs(agentID int64, limit int) ([]*ActivityLog, error)
	// RecentCheckpoints returns the agent's newest checkpoints, newest
	// first, at most limit.
	RecentCheckpoints(agentID int64, limit int) ([]*Checkpoint, error)
}

// ActivityLogResult is what CreateActivityLog returns.
type ActivityLogResult struct {
	Log           *ActivityLog
	HeartbeatID   string
	Elapsed       Elapsed   // since the heartbeat began
	Notes         []string  // what the log did to deep work and the reflection duty
	Completed     *DeepWork // the declaration the log completed, if any
	ReflectionDue bool      // the next log must be a reflection
}

// CreateActivityLog files l for the caller under its current heartbeat ID
// and applies it to deep work and the reflection duty (SPEC §3); l may name
// a task the caller holds (l.TaskID). Errors: EINVALID, and for the task
// ENOTFOUND, EPRECONDITION, EPERMISSION (nothing is written).
func (s *Liveness) CreateActivityLog(ctx context.Context, caller *Agent, l ActivityLog) (*ActivityLogResult, error) {
	if err := NormalizeActivityLog(&l); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var res *ActivityLogResult
	err := update(ctx, s.store, func(tx livenessTx) error {
		a, st, loc, err := s.callerLiveness(tx, caller.ID)
		if err != nil {
			return err
		}
		if err := CheckTaskNamed(tx, a, l.TaskID); err != nil {
			return err
		}
		// The log is the result of the deep work in force: its elapsed time
		// is judged under the declaration.
		inForce := st.ActiveDeepWork.InForce(now)
		log := l
		log.ID, log.AgentID, log.HeartbeatID, log.CreatedAt = 0, a.ID, a.CurrentHeartbeatID, now
		fx := ApplyActivityLog(st, log, now, loc)
		if err := tx.InsertActivityLog(&log); err != nil {
			return err
		}
		if _, err := s.persistLiveness(tx, st, now, loc, fx.Events, fx.Completed, fx.Expired); err != nil {
			return err
		}
		res = &ActivityLogResult{
			Log:           &log,
			HeartbeatID:   a.CurrentHeartbeatID,
			Elapsed:       ComputeElapsed(heartbeatStart(a), now, inForce, loc, s.cfg.Health.Elapsed()),
			Notes:         fx.Notes,
			Completed:     fx.Completed,
			ReflectionDue: fx.ReflectionDue,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// heartbeatStart returns when a's current heartbeat began.
func heartbeatStart(a *Agent) time.Time {
	if !a.HeartbeatStartedAt.IsZero() {
		return a.HeartbeatStartedAt
	}
	return a.CreatedAt
}

// CheckpointReply is what Checkpoint returns.
type CheckpointReply struct {
	Checkpoint  *Checkpoint
	HeartbeatID string
	CheckpointResult
}

// Checkpoint files "I am consciously still working on currentActivity" for
// the caller under its current heartbeat ID (SPEC §3), about the task
// taskID when not 0 (which the caller must hold). Errors: EINVALID,
// ENOTFOUND, EPRECONDITION, EPERMISSION (the task; nothing is written).
func (s *Liveness) Checkpoint(ctx context.Context, caller *Agent, currentActivity string, taskID int64) (*CheckpointReply, error) {
	c := Checkpoint{CurrentActivity: currentActivity, TaskID: taskID}
	if err := NormalizeCheckpoint(&c); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var res *CheckpointReply
	err := update(ctx, s.store, func(tx livenessTx) error {
		var err error
		res, err = s.FileCheckpoint(tx, caller, c, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkpointTx is what filing a checkpoint reads and writes.
type checkpointTx interface {
	// ActivityTx
	InsertCheckpoint(c *Checkpoint) error
	// DeepWorkTx
	UpdateDeepWork(d *DeepWork) error
	// EventTx
	InsertEvent(e *Event) error
	// HealthTx
	AgentLiveness(agentID int64) (*Agent, *LivenessState, error)
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
	// TaskTx
	TaskByID(id int64) (*Task, error)
}

// FileCheckpoint files c, normalized, as caller's checkpoint at now in tx.
func (s *Liveness) FileCheckpoint(tx checkpointTx, caller *Agent, c Checkpoint, now time.Time) (*CheckpointReply, error) {
	a, st, loc, err := s.callerLiveness(tx, caller.ID)
	if err != nil {
		return nil, err
	}
	if err := CheckTaskNamed(tx, a, c.TaskID); err != nil {
		return nil, err
	}
	cp := c
	cp.AgentID, cp.HeartbeatID, cp.CreatedAt = a.ID, a.CurrentHeartbeatID, now
	r := ApplyCheckpoint(st, cp.HeartbeatID, now, loc, s.cfg.Health.Elapsed())
	if err := tx.InsertCheckpoint(&cp); err != nil {
		return nil, err
	}
	if _, err := s.persistLiveness(tx, st, now, loc, nil); err != nil {
		return nil, err
	}
	return &CheckpointReply{Checkpoint: &cp, HeartbeatID: cp.HeartbeatID, CheckpointResult: r}, nil
}

// HeartbeatElapsed returns the time since heartbeat ID id began (the
// caller's current heartbeat when id is empty) with its message (SPEC §3).
// Errors: EINVALID (malformed or future ID).
func (s *Liveness) HeartbeatElapsed(ctx context.Context, caller *Agent, id string) (string, Elapsed, error) {
	now := s.clock.Now()
	var e Elapsed
	err := view(ctx, s.store, func(tx livenessTx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		start := heartbeatStart(a)
		if id == "" {
			id = a.CurrentHeartbeatID
		} else if start, err = ParseHeartbeatID(id, s.cfg.Location, now); err != nil {
			return err
		}
		st, err := tx.LivenessState(a.ID)
		if err != nil {
			return err
		}
		e = ComputeElapsed(start, now, st.ActiveDeepWork.InForce(now), s.locale(a), s.cfg.Health.Elapsed())
		return nil
	})
	if err != nil {
		return "", Elapsed{}, err
	}
	return id, e, nil
}

// HeartbeatResult is what Service.Heartbeat returns.
type HeartbeatResult struct {
	HeartbeatID      string
	StartedAt        time.Time
	Unread, Mentions int64
	Beat, SinceLast  int64
	SinceLastReading string
}

// Heartbeat starts a new unit of work for the caller: it sets the caller's
// current heartbeat ID to now.
func (s *Liveness) Heartbeat(ctx context.Context, caller *Agent) (*HeartbeatResult, error) {
	now := s.clock.Now()
	r := &HeartbeatResult{HeartbeatID: FormatHeartbeatID(now, s.cfg.Location), StartedAt: now.Truncate(time.Second), Beat: s.beat.Load()}
	// RowLocked: a heartbeat writes only two columns of the caller's own
	// row, so replicas on one database may take heartbeats side by side.
	// The unread counts come back from the same statement: both stores keep
	// them as counters, so the read is one row, not a count of the backlog.
	err := update(RowLocked(ctx), s.store, func(tx livenessTx) error {
		var err error
		r.Unread, r.Mentions, err = tx.StartHeartbeat(caller.ID, r.HeartbeatID, r.StartedAt)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.SinceLast = SinceLast(r.Beat, caller.LastInteractionBeat)
	r.SinceLastReading = BeatReading(r.SinceLast)
	return r, nil
}

// ListActivity returns the named agent's newest activity logs and
// checkpoints (at most limit of each, default 50), newest first. Errors:
// EINVALID (name, limit), ENOTFOUND.
func (s *Liveness) ListActivity(ctx context.Context, name string, limit int) ([]*ActivityLog, []*Checkpoint, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, nil, err
	}
	limit, err := s.limit(limit, 50)
	if err != nil {
		return nil, nil, err
	}
	var logs []*ActivityLog
	var cps []*Checkpoint
	err = view(ctx, s.store, func(tx livenessTx) error {
		a, err := tx.AgentByName(name)
		if err != nil {
			return err
		}
		if logs, err = tx.RecentActivityLogs(a.ID, limit); err != nil {
			return err
		}
		cps, err = tx.RecentCheckpoints(a.ID, limit)
		return err
	})
	return logs, cps, err
}
