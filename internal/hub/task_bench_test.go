package hub_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// percentile returns the p-th percentile (0-100) of ds, sorted in place.
func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*p/100))]
}

// BenchmarkNextTaskClaim32 has 32 agents call next_task at once, each
// again as soon as it has its task, on a SQLite file, until b.N tasks are
// claimed: each call picks the best ready task and claims it with the
// conditional write. Reported: the calls' p50 and p99 latency.
//
//	go test ./internal/hub -run '^$' -bench NextTaskClaim32 -benchtime 4000x -count 5
func BenchmarkNextTaskClaim32(b *testing.B) {
	h := newTestHub(b)
	tasks := h.Tasks
	ctx := context.Background()
	const agents = 32
	as := make([]*hub.Agent, agents)
	for i := range as {
		as[i], _ = h.agent(b, fmt.Sprintf("worker-%02d", i))
	}
	for left := b.N; left > 0; left -= 5000 {
		items := make([]hub.ImportItem, min(left, 5000))
		for i := range items {
			items[i] = hub.ImportItem{Spec: hub.TaskSpec{Title: fmt.Sprintf("task %d", i), Priority: hub.Priority(1 + i%4)}}
		}
		if _, err := tasks.Import(ctx, nil, "", items); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([][]time.Duration, agents)
	var next sync.Mutex
	claimed := 0
	take := func() bool {
		next.Lock()
		defer next.Unlock()
		claimed++
		return claimed <= b.N
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for take() {
				t0 := time.Now()
				r, err := tasks.Next(ctx, as[i], hub.NextRequest{})
				lat[i] = append(lat[i], time.Since(t0))
				if err != nil || r.Task == nil {
					b.Errorf("next_task: %+v, %v", r, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(lat...)
	b.ReportMetric(float64(percentile(all, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(all, 99).Microseconds())/1000, "p99-ms")
}

// BenchmarkTaskReadyWake parks an agent in next_task while the only task
// it could take waits for another, then completes that one: the parked
// call wakes and claims the task made ready. Reported: p50 and p99 from
// the start of the completion (its commit included) to the parked call's
// return with the task.
//
//	go test ./internal/hub -run '^$' -bench TaskReadyWake -benchtime 500x -count 5
func BenchmarkTaskReadyWake(b *testing.B) {
	h := newTestHub(b)
	tasks := h.Tasks
	ctx := context.Background()
	worker, _ := h.agent(b, "worker")
	waiter, _ := h.agent(b, "waiter")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		first, err := tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "first", Role: "none"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "then", DependsOn: []int64{first.ID}}); err != nil {
			b.Fatal(err)
		}
		worker.Role = "none"
		if _, _, err := tasks.Claim(ctx, worker, first.ID); err != nil {
			b.Fatal(err)
		}
		got := make(chan time.Time, 1)
		go func() {
			r, err := tasks.Next(ctx, waiter, hub.NextRequest{Wait: 10 * time.Second})
			if err != nil || r.Task == nil {
				b.Errorf("parked next_task: %+v, %v", r, err)
			}
			got <- time.Now()
		}()
		for h.Waiters.AgentCount(waiter.ID) == 0 {
			time.Sleep(50 * time.Microsecond)
		}
		time.Sleep(time.Millisecond) // parked, past its first look
		b.StartTimer()
		t0 := time.Now()
		if _, _, err := tasks.Complete(ctx, worker, first.ID, ""); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-got).Sub(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 99).Microseconds())/1000, "p99-ms")
}

// BenchmarkHeartbeatDuringDependencyEdits has one agent change a task's
// depends_on to the end of a 20,000-task chain ten times a second while
// another agent sends b.N heartbeats, one every 10 ms, on a SQLite file:
// the cycle check's walk of the chain must not hold the single writer.
// Reported: the heartbeats' p50 and p99 latency, and the edits' p50.
//
//	go test ./internal/hub -run '^$' -bench HeartbeatDuringDependencyEdits -benchtime 300x -count 1
func BenchmarkHeartbeatDuringDependencyEdits(b *testing.B) {
	h := newRealTimeHub(b)
	ctx := context.Background()
	editor, _ := h.agent(b, "editor")
	beater, _ := h.agent(b, "beater")
	var last int64
	for part := 0; part < 4; part++ {
		items := make([]hub.ImportItem, 5000)
		for i := range items {
			items[i] = hub.ImportItem{Key: fmt.Sprint(i), Spec: hub.TaskSpec{Title: fmt.Sprintf("step %d.%d", part, i)}}
			switch {
			case i > 0:
				items[i].After = []string{fmt.Sprint(i - 1)}
			case last > 0:
				items[i].Spec.DependsOn = []int64{last}
			}
		}
		ts, err := h.Tasks.Import(ctx, editor, "", items)
		if err != nil {
			b.Fatal(err)
		}
		last = ts[len(ts)-1].ID
	}
	head, err := h.Tasks.Create(ctx, editor, "", hub.TaskSpec{Title: "head"})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	var edits []time.Duration
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			t0 := time.Now()
			h.Tasks.Update(ctx, editor, head.ID, hub.TaskPatch{Fields: []string{"depends_on"}, Spec: hub.TaskSpec{DependsOn: []int64{last}}})
			edits = append(edits, time.Since(t0))
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := h.Heartbeat(ctx, beater); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(percentile(lat, 50).Microseconds())/1000, "hb-p50-ms")
	b.ReportMetric(float64(percentile(lat, 99).Microseconds())/1000, "hb-p99-ms")
	if len(edits) > 0 {
		b.ReportMetric(float64(percentile(edits, 50).Microseconds())/1000, "edit-p50-ms")
	}
}
