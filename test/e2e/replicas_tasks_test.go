package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// TestTwoReplicasShareTheTaskBoard runs two hub processes on one
// PostgreSQL database: 32 agents claim one task through both at once and
// exactly one wins; a next_task parked on B wakes in milliseconds when a
// task is made ready through A (A's NOTIFY), with the fallback poll off.
func TestTwoReplicasShareTheTaskBoard(t *testing.T) {
	dbURL := pgtest.Database(t)
	bin := buildBinaries(t)
	flags := []string{"--database-url", dbURL, "--tick-interval", "200ms", "--poll-interval", "1h"}
	a, b := startHub(t, bin, flags...), startHub(t, bin, flags...)
	ctx := context.Background()

	const n = 32
	tokens := make([]string, n)
	for i := range tokens {
		r := a.hubctl(t, nil, "agent", "add", fmt.Sprintf("claimer-%02d", i), "-o", "json").must(t)
		var resp struct{ Token string }
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || resp.Token == "" {
			t.Fatalf("agent add: %v\n%s", err, r.stdout)
		}
		tokens[i] = resp.Token
	}
	a.hubctl(t, nil, "tasks", "add", "the contested task").must(t)
	codes := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := a
			if i%2 == 1 {
				h = b
			}
			<-start
			code, _, err := h.do(ctx, "POST", "/v1/tasks/1:claim", tokens[i], map[string]any{})
			if err != nil {
				t.Errorf("claim %d: %v", i, err)
			}
			codes[i] = code
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for i, c := range codes {
		switch c {
		case 200:
			won++
		case 400: // FailedPrecondition: claimed by the winner
		default:
			t.Errorf("claimer %d got HTTP %d, want 200 or 400", i, c)
		}
	}
	if won != 1 {
		t.Fatalf("%d claimers won the task across the two replicas, want exactly 1", won)
	}

	// A next_task parked on B; a task made ready through A.
	type reply struct {
		code int
		body map[string]any
	}
	done := make(chan reply, 1)
	go func() {
		code, body, err := b.do(ctx, "POST", "/v1/tasks:next", tokens[2], map[string]any{"wait_seconds": 30, "labels": []string{"late"}})
		if err != nil {
			t.Error(err)
		}
		done <- reply{code, body}
	}()
	waitFor(t, "next_task parked on B", 20*time.Second, func() bool { return b.metric("hub_parked_waiters") == "1" })
	made := time.Now()
	a.hubctl(t, nil, "tasks", "add", "made ready on A", "--label", "late").must(t)
	select {
	case r := <-done:
		task, _ := r.body["task"].(map[string]any)
		if r.code != 200 || task == nil || task["title"] != "made ready on A" || !strings.HasPrefix(fmt.Sprint(task["assignee"]), "claimer-02") {
			t.Fatalf("next_task on B = %d %v, want the task made on A claimed by claimer-02", r.code, r.body)
		}
		t.Logf("next_task parked on B woken %v after hubctl on A started", time.Since(made))
	case <-time.After(10 * time.Second):
		t.Fatal("next_task parked on B not woken by a task made ready on A (the poll is off)")
	}
}
