package orchestrator_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/orchestrator"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// benchAgents is the size of the hub in BenchmarkTick.
const benchAgents = 100_000

// benchTemplate is a migrated hub database holding benchAgents agents,
// built once per test process (seedTemplate) and copied for each run of
// BenchmarkTick; benchTemplateDir holds it and is removed by TestMain.
var (
	benchTemplateOnce sync.Once
	benchTemplateDir  string
	benchTemplate     string
	benchTemplateErr  error
)

// TestMain removes the benchmark's template database after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchTemplateDir != "" {
		os.RemoveAll(benchTemplateDir)
	}
	os.Exit(code)
}

// seedTemplate returns the path of the template database, building it on
// first use: a migrated store with n agents created an hour before t0,
// their liveness and nudge-check rows scheduled in the far future (nothing
// due), bulk-inserted by sqlite.SeedAgents.
func seedTemplate(n int) (string, error) {
	benchTemplateOnce.Do(func() {
		benchTemplateDir, benchTemplateErr = os.MkdirTemp("", "hub-bench-")
		if benchTemplateErr != nil {
			return
		}
		path := filepath.Join(benchTemplateDir, "hub.db")
		benchTemplateErr = sqlite.SeedAgents(context.Background(), path, n, t0.Add(-time.Hour), t0.Add(24*time.Hour), nil)
		benchTemplate = path
	})
	return benchTemplate, benchTemplateErr
}

// copyFile copies the file src to dst.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// processCPU returns the CPU time this process has used, user and system:
// what a tick costs the machine, which a loaded machine does not inflate as
// it does the tick's wall time.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTick measures one orchestrator tick on a hub of 100,000 agents:
// with nothing due, and with 100 or 1,000 agents due for a health
// evaluation and a nudge check plus as many agents whose calls are flushed
// (1,000 takes two batches of each step).
// By default each due agent has been idle for an hour, so it is evaluated,
// its health transition recorded and it is nudged (the worst case); with
// "active" it has just checkpointed, so the checks find nothing to do. The
// cost grows with the work due, not with the number of agents or the length
// of history. Besides the mean, it reports the median tick, the process's
// CPU per tick and each job's time per tick (STEP-µs/tick, the steps of
// orchestrator.Report).
func BenchmarkTick(b *testing.B) {
	template, err := seedTemplate(benchAgents)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "hub.db")
	if err := copyFile(path, template); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("sqlite3", "file:"+path+"?vfs=unix-excl&_journal_mode=WAL&_busy_timeout=5000") // the store's VFS: the file is this process's alone
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()

	clock := hub.NewFakeClock(t0)
	cfg := hub.DefaultConfig()
	cfg.Location = time.UTC
	svc := hub.NewServices(hub.NewCore(db, clock, cfg, hub.NewWaiters(cfg.WaitLimits, clock)))
	if err := svc.Init(ctx); err != nil {
		b.Fatal(err)
	}
	// The hub runs on the fake clock; the orchestrator times its steps on
	// the system's (each tick is given its time).
	o, err := orchestrator.New(hub.SystemClock{}, orchestrator.JobsOf(svc), hub.DefaultScheduleSettings())
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Init(ctx); err != nil {
		b.Fatal(err)
	}
	if err := o.Tick(ctx, clock.Now()); err != nil { // start the beat, mention cursor
		b.Fatal(err)
	}

	next := 1 // the next agent to make due (each is used once)
	cases := []struct {
		due    int
		active bool // the due agents just acted: their checks find nothing to do
	}{{0, false}, {100, false}, {1000, false}, {100, true}, {1000, true}}
	for _, tc := range cases {
		due := tc.due
		name := fmt.Sprintf("agents=%d/due=%d", benchAgents, due)
		if tc.active {
			name += "/active"
		}
		b.Run(name, func(b *testing.B) {
			var evaluated, nudged int
			steps := map[string]time.Duration{}
			var walls []time.Duration // each tick's
			var cpu time.Duration     // the process's, during the ticks
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				now := clock.Advance(5 * time.Second)
				if due > 0 {
					if next+due > benchAgents {
						next = 1
					}
					lo, hi := next, next+due-1
					next += due
					if _, err := raw.Exec(`UPDATE liveness SET next_eval_at = ? WHERE agent_id BETWEEN ? AND ?`, now.Add(-time.Second).UnixNano(), lo, hi); err != nil {
						b.Fatal(err)
					}
					if _, err := raw.Exec(`UPDATE agent_checks SET next_check_at = ?, episode = '' WHERE agent_id BETWEEN ? AND ?`, now.Add(-time.Second).UnixNano(), lo, hi); err != nil {
						b.Fatal(err)
					}
					if tc.active {
						if _, err := raw.Exec(`UPDATE liveness SET last_checkpoint_at = ?, last_reflection_at = ?, health_state = 'healthy', health_kinds = '' WHERE agent_id BETWEEN ? AND ?`,
							now.Add(-time.Minute).UnixNano(), now.Add(-time.Minute).UnixNano(), lo, hi); err != nil {
							b.Fatal(err)
						}
					}
					// Each due agent makes a call, so the tick flushes it.
					for id := lo; id <= hi; id++ {
						token := fmt.Sprintf("bench-token-%06d", id)
						if _, err := raw.Exec(`UPDATE agents SET token_hash = ? WHERE id = ?`, hub.HashToken(token), id); err != nil {
							b.Fatal(err)
						}
						if _, err := svc.Agents.Authenticate(ctx, token); err != nil {
							b.Fatal(err)
						}
					}
				}
				// The set-up's writes go to the database file now, not in
				// the timed tick's commit (an automatic checkpoint).
				if _, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
					b.Fatal(err)
				}
				cpu0 := processCPU(b)
				began := time.Now()
				b.StartTimer()
				if err := o.Tick(ctx, now); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				walls = append(walls, time.Since(began))
				cpu += processCPU(b) - cpu0
				b.StartTimer()
				rep := o.Stats().Last
				evaluated += rep.Evaluated
				nudged += rep.Nudged
				for k, v := range rep.Steps {
					steps[k] += v
				}
			}
			for k, v := range steps {
				b.ReportMetric(float64(v.Microseconds())/float64(b.N), k+"-µs/tick")
			}
			slices.Sort(walls)
			b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "ms-median/tick")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/tick")
			b.ReportMetric(float64(evaluated)/float64(b.N), "evaluated/tick")
			b.ReportMetric(float64(nudged)/float64(b.N), "nudged/tick")
		})
	}
}
