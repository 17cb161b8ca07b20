package hub_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestFindCycle(t *testing.T) {
	t.Parallel()
	graph := map[int64][]int64{2: {1}, 3: {2}, 4: {3, 5}, 5: nil}
	for _, tt := range []struct {
		name string
		id   int64
		deps []int64
		want []int64
	}{
		{"no dependency", 1, nil, nil},
		{"a chain away from the task", 6, []int64{4}, nil},
		{"the task's own dependent", 1, []int64{3}, []int64{1, 3, 2, 1}},
		{"through the second branch", 5, []int64{4}, []int64{5, 4, 5}},
		{"itself", 7, []int64{7}, []int64{7, 7}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := hub.FindCycle(tt.id, tt.deps, graph); !slices.Equal(got, tt.want) {
				t.Errorf("FindCycle(%d, %v) = %v, want %v", tt.id, tt.deps, got, tt.want)
			}
		})
	}
}

func TestDecideLease(t *testing.T) {
	t.Parallel()
	clock := hub.NewFakeClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	claimed := clock.Now()
	const lease = 30 * time.Minute
	for _, tt := range []struct {
		name     string
		activity time.Duration // after the claim; negative: before it
		disabled bool
		at       time.Duration
		lapsed   bool
		next     time.Duration
	}{
		{"fresh claim", -time.Hour, false, 10 * time.Minute, false, 30 * time.Minute},
		{"at the lease's end", -time.Hour, false, 30 * time.Minute, true, 0},
		{"activity carries it", 20 * time.Minute, false, 31 * time.Minute, false, 50 * time.Minute},
		{"silent past the activity's lease", 20 * time.Minute, false, 50 * time.Minute, true, 0},
		{"disabled holder", 20 * time.Minute, true, 21 * time.Minute, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := clock.Now().Add(tt.at)
			lapsed, next := hub.DecideLease(claimed, claimed.Add(tt.activity), lease, tt.disabled, now)
			if lapsed != tt.lapsed {
				t.Errorf("lapsed = %v, want %v", lapsed, tt.lapsed)
			}
			if !tt.lapsed && !next.Equal(claimed.Add(tt.next)) {
				t.Errorf("next look at %v, want %v", next.Sub(claimed), tt.next)
			}
		})
	}
}

func TestTaskFits(t *testing.T) {
	t.Parallel()
	task := &hub.Task{Labels: []string{"api", "go"}, Role: "coder"}
	for _, tt := range []struct {
		labels []string
		role   string
		want   bool
	}{
		{nil, "coder", true},
		{[]string{"go"}, "coder", true},
		{[]string{"go", "api"}, "coder", true},
		{[]string{"docs"}, "coder", false},
		{nil, "reviewer", false},
		{nil, "", false},
	} {
		if got := hub.TaskFits(task, tt.labels, tt.role); got != tt.want {
			t.Errorf("TaskFits(labels %v, role %q) = %v, want %v", tt.labels, tt.role, got, tt.want)
		}
	}
	if !hub.TaskFits(&hub.Task{}, nil, "anyone") {
		t.Error("a task without role or labels does not fit everyone")
	}
}

func TestNormalizeTaskSpec(t *testing.T) {
	t.Parallel()
	s := hub.TaskSpec{Title: "  ship it ", Labels: []string{"Go", "api", "go"}, DependsOn: []int64{3, 1, 3}, Paths: []string{"src/", "src"}}
	if err := hub.NormalizeTaskSpec(&s); err != nil {
		t.Fatal(err)
	}
	if s.Title != "ship it" || !slices.Equal(s.Labels, []string{"api", "go"}) || !slices.Equal(s.DependsOn, []int64{1, 3}) ||
		s.Priority != hub.PriorityNormal || len(s.Paths) != 1 {
		t.Errorf("normalized = %+v", s)
	}
	for _, bad := range []hub.TaskSpec{
		{},
		{Title: "two\nlines"},
		{Title: "x", Labels: []string{"has space"}},
		{Title: "x", Paths: []string{"../up"}},
		{Title: "x", Paths: []string{"**"}},
		{Title: "x", DependsOn: []int64{0}},
		{Title: strings.Repeat("t", 201)},
	} {
		if err := hub.NormalizeTaskSpec(&bad); hub.ErrorCode(err) != hub.EINVALID {
			t.Errorf("NormalizeTaskSpec(%+v) = %v, want EINVALID", bad, err)
		}
	}
}

func TestParseTaskID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"12": 12, "#7": 7, " 3 ": 3} {
		if got, err := hub.ParseTaskID("id", in); err != nil || got != want {
			t.Errorf("ParseTaskID(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "abc", "1.5"} {
		if _, err := hub.ParseTaskID("id", in); hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(err.Error(), "task ID") {
			t.Errorf("ParseTaskID(%q) = %v, want EINVALID saying a task ID is expected", in, err)
		}
	}
}
