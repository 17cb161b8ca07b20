package hub

import (
	"context"
	"fmt"
	"time"
)

// NextRequest is what next_task asks for.
type NextRequest struct {
	Labels []string
	Role   string // "" the caller's role
	Wait   time.Duration
}

// NextResult is what next_task answers.
type NextResult struct {
	Task      *Task // nil when none fitted in time
	Conflicts []Conflict
	TimedOut  bool
}

// Next claims for caller the highest-priority ready task of its project
// that fits req (TaskFits), the oldest first, parking up to req.Wait (at
// most the hub's WaitMax, and answering before ctx's deadline) until one is
// ready. A parked call registers before its first look, so a task made
// ready after the look wakes it in milliseconds; tasks made ready by
// another process (a replica) wake it through TasksReady, and after a lost
// notification through the hub's RecheckWaits: nothing polls. Errors: EINVALID,
// EEXHAUSTED (the waits' limits), those of Claim.
func (ts *Tasks) Next(ctx context.Context, caller *Agent, req NextRequest) (*NextResult, error) {
	labels, err := normalizeLabels(req.Labels)
	if err != nil {
		return nil, err
	}
	role := req.Role
	if role == "" {
		role = caller.Role
	}
	if req.Wait < 0 {
		return nil, Errorf(EINVALID, "wait_seconds is negative: give 0 to answer at once, or up to %d seconds to park", int(ts.cfg.WaitMax/time.Second))
	}
	wait := min(req.Wait, ts.cfg.WaitMax)
	if dl, ok := ctx.Deadline(); ok {
		wait = max(0, min(wait, dl.Sub(ts.clock.Now())-ts.cfg.DeadlineMargin))
	}
	if until := ts.limits.until(caller.ID, ts.clock.Now()); !until.IsZero() {
		wait = min(wait, until.Sub(ts.clock.Now())) // answered when the limit lifts
	}
	var tw *taskWait
	if wait > 0 {
		w, err := ts.waiters.Register(caller.ID, caller.authEpoch, caller.authHash)
		if err != nil {
			return nil, err
		}
		defer w.Close()
		w.expireAfter(wait)
		tw = &taskWait{project: ProjectOr(caller.Project), labels: labels, role: role, w: w}
		defer ts.waiters.parkTask(tw)()
	}
	for {
		var t *Task
		var cs []Conflict
		var err error
		// An agent its host reports rate limited is handed nothing until
		// the limit lifts (usage.go), nor one a budget holds until a person
		// raises or lifts it or the UTC day ends (budget.go).
		if ts.limits.until(caller.ID, ts.clock.Now()).IsZero() {
			var held bool
			if held, err = budgetHolds(ctx, ts.store, caller, ts.clock.Now()); err == nil && !held {
				t, cs, err = ts.tryNext(ctx, caller, labels, role)
			}
		}
		if err != nil || t != nil {
			return &NextResult{Task: t, Conflicts: cs}, err
		}
		if tw == nil {
			return &NextResult{TimedOut: true}, nil
		}
		if err := revokedErr(tw.w); err != nil {
			return nil, err
		}
		if tw.w.expired.Load() || ts.stopping() {
			return &NextResult{TimedOut: true}, nil
		}
		select {
		case <-tw.w.c: // a fitting task, the timeout, the hub's shutdown
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// nextCandidates is how many ready tasks one look tries to claim: the
// others may be claimed meanwhile, or their paths held.
const nextCandidates = 4

// tryNext claims the best fitting ready task for caller, if any. A task
// whose paths another agent holds exclusively is left for later and the
// next one is tried.
func (ts *Tasks) tryNext(ctx context.Context, caller *Agent, labels []string, role string) (*Task, []Conflict, error) {
	project := ProjectOr(caller.Project)
	skip := map[int64]bool{}
	for round := 0; round < 3; round++ {
		now := ts.clock.Now()
		var won *Task
		err := update(ctx, ts.store, func(tx tasksTx) error {
			won = nil
			cands, err := tx.ReadyTasks(project, labels, role, nextCandidates+len(skip))
			if err != nil {
				return err
			}
			lease, err := ts.leaseOf(tx, project)
			if err != nil {
				return err
			}
			for _, c := range cands {
				if skip[c.ID] {
					continue
				}
				ok, err := tx.ClaimTask(c.ID, caller.ID, now, now.Add(lease))
				if err != nil {
					return err
				}
				if ok {
					won, err = claimed(tx, c.ID, caller.ID)
					return err
				}
			}
			return nil
		})
		if err != nil || won == nil {
			return nil, nil, err
		}
		cs, err := ts.reservePaths(ctx, caller, won)
		if ErrorCode(err) == EPRECONDITION {
			skip[won.ID] = true
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		ts.changed()
		return won, cs, nil
	}
	return nil, nil, nil
}

// claimedTx reads a claimed task and adds its watcher.
type claimedTx interface {
	TaskByID(id int64) (*Task, error)
	AddTaskWatcher(taskID, agentID int64) error
}

// claimed reads back task id just claimed by agentID and makes agentID a
// watcher of it.
func claimed(tx claimedTx, id, agentID int64) (*Task, error) {
	if err := tx.AddTaskWatcher(id, agentID); err != nil {
		return nil, err
	}
	return tx.TaskByID(id)
}

// reservePaths reserves t's paths for holder, its new claimer. When
// another agent holds them exclusively, the claim is undone and the
// refusal (naming the holder) returned.
func (ts *Tasks) reservePaths(ctx context.Context, holder *Agent, t *Task) ([]Conflict, error) {
	if len(t.Paths) == 0 {
		return nil, nil
	}
	_, cs, err := ts.reserve.ReservePaths(ctx, holder, ReservationRequest{Patterns: t.Paths, Mode: ReservationExclusive,
		TTL: MaxReservationTTL, Reason: fmt.Sprintf("task #%d", t.ID)})
	if err == nil {
		return cs, nil
	}
	undo := update(context.WithoutCancel(ctx), ts.store, func(tx tasksTx) error {
		cur, err := tx.TaskByID(t.ID)
		if err != nil || cur.State != TaskClaimed || cur.AssigneeID != holder.ID || !cur.ClaimedAt.Equal(t.ClaimedAt) {
			return err
		}
		returnToOpen(cur)
		return tx.UpdateTask(cur)
	})
	if undo != nil {
		return nil, fmt.Errorf("undo the claim of task %d: %w", t.ID, undo)
	}
	if ErrorCode(err) == EPRECONDITION {
		return nil, Errorf(EPRECONDITION, "task %s cannot be claimed now: its paths are held: %s", t, ErrorMessage(err))
	}
	return nil, err
}

// returnToOpen takes t off its holder.
func returnToOpen(t *Task) {
	t.State, t.AssigneeID, t.Assignee, t.ClaimedAt, t.LeaseDue = TaskOpen, 0, "", time.Time{}, time.Time{}
}
