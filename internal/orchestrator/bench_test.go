package orchestrator_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/orchestrator"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// benchAgents is the size of the hub in BenchmarkTick.
const benchAgents = 100_000

// seedAgents bulk-inserts n agents created an hour before t0, with their
// liveness and nudge-check rows scheduled in the far future (nothing due),
// straight into the SQLite file (going through CreateAgent would measure
// registration, not ticks).
func seedAgents(b *testing.B, path string, n int) {
	b.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	created := t0.Add(-time.Hour).UnixNano()
	far := t0.Add(24 * time.Hour).UnixNano()
	stmts := []string{
		`INSERT INTO agents (id, name, created_at) VALUES (?, ?, ?)`,
		`INSERT INTO liveness (agent_id, created_at, next_eval_at) VALUES (?, ?, ?)`,
		`INSERT INTO agent_checks (agent_id, next_check_at) VALUES (?, ?)`,
	}
	ps := make([]*sql.Stmt, len(stmts))
	for i, q := range stmts {
		if ps[i], err = tx.Prepare(q); err != nil {
			b.Fatal(err)
		}
	}
	for i := 1; i <= n; i++ {
		if _, err := ps[0].Exec(i, fmt.Sprintf("agent-%06d", i), created); err != nil {
			b.Fatal(err)
		}
		if _, err := ps[1].Exec(i, created, far); err != nil {
			b.Fatal(err)
		}
		if _, err := ps[2].Exec(i, far); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTick measures one orchestrator tick on a hub of 100,000 agents:
// with nothing due, and with a given number of agents due for a health
// evaluation and a nudge check plus as many agents whose calls are flushed.
// By default each due agent has been idle for an hour, so it is evaluated,
// its health transition recorded and it is nudged (the worst case); with
// "active" it has just checkpointed, so the checks find nothing to do. The
// cost grows with the work due, not with the number of agents or the length
// of history.
func BenchmarkTick(b *testing.B) {
	path := filepath.Join(b.TempDir(), "hub.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	db.Close()
	seedAgents(b, path, benchAgents)
	if db, err = sqlite.Open(ctx, path, sqlite.Options{}); err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()

	clock := hub.NewFakeClock(t0)
	cfg := hub.DefaultConfig()
	cfg.Location = time.UTC
	svc := hub.NewService(db, clock, cfg)
	if err := svc.Init(ctx); err != nil {
		b.Fatal(err)
	}
	o, err := orchestrator.New(svc, hub.DefaultScheduleSettings())
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
	}{{0, false}, {10, false}, {100, false}, {500, false}, {100, true}}
	for _, tc := range cases {
		due := tc.due
		name := fmt.Sprintf("agents=%d/due=%d", benchAgents, due)
		if tc.active {
			name += "/active"
		}
		b.Run(name, func(b *testing.B) {
			var evaluated, nudged int
			steps := map[string]time.Duration{}
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
					for id := lo; id <= hi; id++ {
						svc.Presence().Touch(int64(id), now.Add(-time.Second), 1)
					}
				}
				b.StartTimer()
				if err := o.Tick(ctx, now); err != nil {
					b.Fatal(err)
				}
				rep := o.LastReport()
				evaluated += rep.Evaluated
				nudged += rep.Nudged
				for k, v := range rep.Steps {
					steps[k] += v
				}
			}
			for k, v := range steps {
				b.ReportMetric(float64(v.Microseconds())/float64(b.N), k+"-µs/tick")
			}
			b.ReportMetric(float64(evaluated)/float64(b.N), "evaluated/tick")
			b.ReportMetric(float64(nudged)/float64(b.N), "nudged/tick")
		})
	}
}
