package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/agenthub/hub/internal/gcfloor"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/orchestrator"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// tickRow is one case of the tick scenario: ticks with due agents due.
type tickRow struct {
	agents, due int
	wall, cpu   []time.Duration // per tick, sorted
	evaluated   int             // per tick
	nudged      int             // per tick
	steps       map[string]time.Duration
	checkpoint  time.Duration // per tick: the store's checkpoints of its log, beside the writer
}

// tickPhase measures orchestrator ticks in this process, on a SQLite store
// of c.tickAgents agents: the real store, service and orchestrator, driven
// by a fake clock so that exactly the chosen number of agents is due in
// each tick. Creating 100,000 agents over gRPC would measure registration
// (minutes), and a real hub's wall clock cannot make 10,000 agents due in
// the same tick; so the agents are bulk-inserted with SQL, as they would
// be after an import, and made due by moving their next-evaluation times.
//
// A due agent is in the worst case: idle for an hour, so its health changes
// (an event) and it is nudged (a message, a delivery and an event). Before
// each tick the write-ahead log is checkpointed, so the tick starts with the
// store's writes on disk and its own commit in an empty log.
func (b *bench) tickPhase(ctx context.Context) error {
	c := b.c
	if os.Getenv("GOGC") == "" {
		gcfloor.Start(gcfloor.Hub) // as hub serve does: the tick runs in its process
	}
	dir, err := os.MkdirTemp("", "hubbench-tick-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hub.db")
	t0 := time.Date(2026, 2, 19, 10, 0, 0, 0, time.UTC)
	b.progress("tick: seeding a store of %d agents", c.tickAgents)
	if err := sqlite.SeedAgents(ctx, path, c.tickAgents, t0.Add(-time.Hour), t0.Add(24*time.Hour), tickToken); err != nil {
		return fmt.Errorf("tick: seed the store: %w", err)
	}
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	raw, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		return err
	}
	defer raw.Close()
	clock := hub.NewFakeClock(t0)
	cfg := hub.DefaultConfig()
	cfg.Location = time.UTC
	svc := hub.NewServices(hub.NewCore(db, clock, cfg, hub.NewWaiters(cfg.WaitLimits, clock)))
	if err := svc.Init(ctx); err != nil {
		return err
	}
	o, err := orchestrator.New(clock, orchestrator.JobsOf(svc), hub.DefaultScheduleSettings())
	if err != nil {
		return err
	}
	o.Logger = slog.New(slog.DiscardHandler)
	if err := o.Init(ctx); err != nil {
		return err
	}
	if err := o.Tick(ctx, clock.Now()); err != nil { // the first beat, the mention cursor
		return err
	}
	if c.tickProfile != "" {
		f, err := os.Create(c.tickProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	next := 1 // the next agent to make due; each is due once per pass
	for _, due := range c.tickDue {
		row := tickRow{agents: c.tickAgents, due: due, steps: map[string]time.Duration{}}
		ck0 := db.Checkpoints().Time
		for range c.tickSamples {
			now := clock.Advance(5 * time.Second)
			if next+due > c.tickAgents+1 {
				next = 1
			}
			var err error
			pprof.Do(ctx, pprof.Labels("tick", "setup"), func(ctx context.Context) { // excluded from the profile: -tagignore tick=setup
				err = makeDue(ctx, raw, svc, next, next+due-1, now)
			})
			if err != nil {
				return fmt.Errorf("tick: make agents due: %w", err)
			}
			next += due
			cpu0 := processCPU()
			t := time.Now()
			if err := o.Tick(ctx, now); err != nil {
				return fmt.Errorf("tick with %d due: %w", due, err)
			}
			row.wall = append(row.wall, time.Since(t))
			row.cpu = append(row.cpu, processCPU()-cpu0)
			rep := o.Stats().Last
			row.evaluated, row.nudged = rep.Evaluated, rep.Nudged
			for k, v := range rep.Steps {
				row.steps[k] += v / time.Duration(c.tickSamples)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		row.checkpoint = (checkpointsSettled(db) - ck0) / time.Duration(c.tickSamples)
		slices.Sort(row.wall)
		slices.Sort(row.cpu)
		b.progress("tick: %d agents, %d due: median %s (CPU %s), max %s; %d evaluated, %d nudged; log checkpoints %s per tick",
			row.agents, due, fmtDur(percentile(row.wall, .5)), fmtDur(percentile(row.cpu, .5)), fmtDur(row.wall[len(row.wall)-1]), row.evaluated, row.nudged, fmtDur(row.checkpoint))
		b.res.ticks = append(b.res.ticks, row)
	}
	return nil
}

// tickToken is the token of agent id in the tick scenario's store.
func tickToken(id int) string { return fmt.Sprintf("tick-token-%06d", id) }

// makeDue makes agents lo..hi due for a health evaluation and a nudge
// check at now (a new episode each time), makes a call as each (an
// authentication) so that the tick has their presence to flush, and
// checkpoints the write-ahead log.
func makeDue(ctx context.Context, raw *sql.DB, svc *hub.Services, lo, hi int, now time.Time) error {
	if hi >= lo {
		at := now.Add(-time.Second).UnixNano()
		if _, err := raw.Exec(`UPDATE liveness SET next_eval_at = ? WHERE agent_id BETWEEN ? AND ?`, at, lo, hi); err != nil {
			return err
		}
		if _, err := raw.Exec(`UPDATE agent_checks SET next_check_at = ?, episode = '' WHERE agent_id BETWEEN ? AND ?`, at, lo, hi); err != nil {
			return err
		}
		for id := lo; id <= hi; id++ {
			if _, err := svc.Agents.Authenticate(ctx, tickToken(id)); err != nil {
				return err
			}
		}
	}
	_, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// checkpointsSettled returns the store's time spent in checkpoints once
// no checkpoint has ended for 300 ms (at most 6 s): the checkpoints the
// last tick's commits started run beside the writer, after the tick.
func checkpointsSettled(db *sqlite.DB) time.Duration {
	last := db.Checkpoints()
	for range 20 {
		time.Sleep(300 * time.Millisecond)
		now := db.Checkpoints()
		if now == last {
			break
		}
		last = now
	}
	return last.Time
}

// processCPU returns this process's user+system CPU time so far
// (getrusage: microsecond resolution, unlike /proc/PID/stat's 10 ms).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
