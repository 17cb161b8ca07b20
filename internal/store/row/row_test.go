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

// fakeRow is one row of values, assigned to the destinations as a driver
// does (int64 and string columns only).
type fakeRow []any

func (r fakeRow) Scan(dest ...any) error {
	for i, v := range r {
		switch v := v.(type) {
		case int64:
			*dest[i].(*int64) = v
		case string:
			*dest[i].(*string) = v
		}
	}
	return nil
}

// agentRow returns a row of AgentColumns followed by extra.
func agentRow(id int64, name string, created, disabled, lastSeen int64, extra ...any) fakeRow {
	return append(fakeRow{id, name, "display " + name, "role", "desc", "ja", created, disabled,
		"hb-" + name, int64(0), 10 * id, lastSeen, 2 * id, "proj-" + name, int64(0), 500 * id}, extra...)
}

// An AgentScan reuses its destinations from row to row: each agent it
// returns is its own value, left as it was when the next row is scanned,
// and the extra destinations hold the current row.
func TestAgentScanReusesDestinations(t *testing.T) {
	t.Parallel()
	var extra int64
	s := NewAgentScan(&extra)
	a1, err := s.Scan(agentRow(1, "ann", 100, 0, 300, int64(7)))
	if err != nil {
		t.Fatal(err)
	}
	if extra != 7 {
		t.Errorf("extra after row 1 = %d, want 7", extra)
	}
	a2, err := s.Scan(agentRow(2, "bob", 200, 250, 0, int64(8)))
	if err != nil {
		t.Fatal(err)
	}
	if extra != 8 {
		t.Errorf("extra after row 2 = %d, want 8", extra)
	}
	if a1 == a2 {
		t.Fatal("both rows returned the same agent")
	}
	if a1.ID != 1 || a1.Name != "ann" || a1.Locale != "ja" || a1.Project != "proj-ann" || a1.ReadUpTo != 10 || a1.LastInteractionBeat != 2 ||
		a1.CurrentHeartbeatID != "hb-ann" || !a1.CreatedAt.Equal(time.Unix(0, 100)) || !a1.DisabledAt.IsZero() || !a1.LastSeenAt.Equal(time.Unix(0, 300)) ||
		!a1.SessionEndedAt.IsZero() || !a1.RetiredAt.Equal(time.Unix(0, 500)) {
		t.Errorf("agent of row 1 after row 2 = %+v", a1)
	}
	if a2.ID != 2 || a2.Name != "bob" || a2.Project != "proj-bob" || a2.ReadUpTo != 20 || !a2.DisabledAt.Equal(time.Unix(0, 250)) || !a2.LastSeenAt.IsZero() {
		t.Errorf("agent of row 2 = %+v", a2)
	}
	one, err := Agent(agentRow(3, "cy", 1, 0, 0, int64(9)), &extra)
	if err != nil || one.ID != 3 || one.Name != "cy" || extra != 9 {
		t.Errorf("Agent = %+v, %v (extra %d)", one, err, extra)
	}
}
