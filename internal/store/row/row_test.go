package row

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestNanosRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	if got := Time(Nanos(at)); !got.Equal(at) {
		t.Errorf("Time(Nanos(%v)) = %v", at, got)
	}
	if Nanos(time.Time{}) != 0 || !Time(0).IsZero() {
		t.Error("the zero time is not stored as 0 and back")
	}
}

// A declaration closed by hand is never loaded as active again: the state
// is marked stale instead; an expired one is loaded as it is.
func TestAttach(t *testing.T) {
	t.Parallel()
	active := &hub.DeepWork{ID: 1, State: hub.DeepWorkActive}
	closed := &hub.DeepWork{ID: 2, State: hub.DeepWorkCompleted}
	expired := &hub.DeepWork{ID: 3, State: hub.DeepWorkExpired}
	ds := []*Declared{
		{State: &hub.LivenessState{AgentID: 10}, ActiveID: 1, ExpiredID: 3},
		{State: &hub.LivenessState{AgentID: 11}, ActiveID: 2},
		{State: &hub.LivenessState{AgentID: 12}},
	}
	if got, want := DeclarationIDs(ds), []int64{1, 3, 2}; len(got) != len(want) || got[0] != 1 || got[1] != 3 || got[2] != 2 {
		t.Errorf("DeclarationIDs = %v, want %v", got, want)
	}
	Attach(ds, map[int64]*hub.DeepWork{1: active, 2: closed, 3: expired})
	if ds[0].State.ActiveDeepWork != active || ds[0].State.ExpiredDeepWork != expired || ds[0].Stale {
		t.Errorf("agent 10: %+v stale %v", ds[0].State, ds[0].Stale)
	}
	if ds[1].State.ActiveDeepWork != nil || !ds[1].Stale {
		t.Errorf("agent 11 (closed by hand): active %v stale %v, want none and stale", ds[1].State.ActiveDeepWork, ds[1].Stale)
	}
	byID := map[int64]*hub.DueNudge{11: {Agent: &hub.Agent{ID: 11}}, 13: {Agent: &hub.Agent{ID: 13, CreatedAt: time.Unix(5, 0)}}}
	FillNudgeStates(byID, ds)
	if byID[11].State != ds[1].State || byID[13].State == nil || byID[13].State.AgentID != 13 || !byID[13].State.CreatedAt.Equal(time.Unix(5, 0)) {
		t.Errorf("FillNudgeStates: 11 → %+v, 13 → %+v", byID[11].State, byID[13].State)
	}
}
