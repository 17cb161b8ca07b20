package faults

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// These tests run everywhere (no rig): the checker on histories made by
// hand, each breaking one promise, so that a rig run that passes is known
// to have been able to fail.

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// clean is a history with no broken promise: a direct post from a to b,
// acknowledged, and b's two waits returning it; a channel post whose
// outcome is unknown and that was stored.
func clean() checkInput {
	return checkInput{
		members: []string{"a", "b"},
		ops: []*op{
			{Kind: "post", Agent: "a", Nonce: "n1", To: []string{"b"}, Outcome: ok, ID: 10, Start: at(0), End: at(5)},
			{Kind: "post", Agent: "a", Nonce: "n2", Channel: room, Outcome: unknown, Code: codes.Unavailable, Start: at(6), End: at(9)},
			{Kind: "wait", Agent: "b", After: 0, IDs: []int64{10}, Cursor: 10, Outcome: ok, Start: at(1), End: at(6)},
			{Kind: "wait", Agent: "b", After: 10, IDs: []int64{11}, Cursor: 11, Outcome: ok, Start: at(7), End: at(12)},
			{Kind: "wait", Agent: "a", After: 0, Cursor: 11, Outcome: ok, Start: at(7), End: at(12)},
		},
		store: storeView{
			byNonce:    map[string][]int64{"n1": {10}, "n2": {11}},
			deliveries: map[string]map[int64]bool{"b": {10: true, 11: true}},
		},
		revokeBound: revokeBound,
	}
}

func TestCheckerPassesACleanHistory(t *testing.T) {
	r := check(clean())
	if r.failures() != 0 {
		t.Fatalf("failures = %d, want 0: %v", r.failures(), r.Problems)
	}
	if r.Acked != 1 || r.Unknown != 1 || r.Stored != 1 || r.Absent != 0 {
		t.Errorf("acked %d unknown %d stored %d absent %d, want 1 1 1 0", r.Acked, r.Unknown, r.Stored, r.Absent)
	}
}

func TestCheckerFindsEachBrokenPromise(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(*checkInput)
		count func(*result) int
		want  string
	}{
		{"acknowledged post missing", func(in *checkInput) {
			delete(in.store.byNonce, "n1")
			delete(in.store.deliveries["b"], 10)
			in.ops[2].IDs, in.ops[3].After = nil, 0
		},
			func(r *result) int { return r.Lost }, "not in the store"},
		{"acknowledged post not delivered", func(in *checkInput) { delete(in.store.deliveries["b"], 10) },
			func(r *result) int { return r.Lost }, "not delivered to b"},
		{"post stored twice", func(in *checkInput) { in.store.byNonce["n2"] = []int64{11, 12} },
			func(r *result) int { return r.Duplicated }, "stored 2 times"},
		{"message received twice", func(in *checkInput) { in.ops[3].IDs = []int64{10, 11} },
			func(r *result) int { return r.Duplicated }, "twice"},
		{"message at the cursor sent", func(in *checkInput) {
			in.ops[2].IDs, in.ops[3].IDs = nil, []int64{10, 11}
		}, func(r *result) int { return r.Reordered }, "after 10 returned 10"},
		{"reply out of ID order", func(in *checkInput) {
			in.ops[2].IDs, in.ops[2].Cursor, in.ops[3].After, in.ops[3].IDs = []int64{11, 10}, 11, 11, nil
		}, func(r *result) int { return r.Reordered }, "out of order"},
		{"high priority after normal", func(in *checkInput) {
			in.ops[2].IDs, in.ops[2].Highs, in.ops[2].Cursor, in.ops[3].After, in.ops[3].IDs = []int64{10, 11}, []bool{false, true}, 11, 11, nil
		}, func(r *result) int { return r.Reordered }, "out of order"},
		{"cursor moved past a message", func(in *checkInput) { in.ops[2].IDs = nil },
			func(r *result) int { return r.Skipped }, "moved past message 10"},
		{"cursor went back", func(in *checkInput) { in.ops[3].Cursor = 5 },
			func(r *result) int { return r.CursorBack }, "answered cursor 5"},
		{"reader stopped short", func(in *checkInput) { in.ops[3].IDs, in.ops[3].Cursor = nil, 10 },
			func(r *result) int { return r.NotReached }, "never received message 11"},
		{"refused post stored", func(in *checkInput) { in.ops[1].Outcome, in.ops[1].Code = failed, codes.InvalidArgument },
			func(r *result) int { return r.Phantom }, "was refused"},
		{"post nobody sent", func(in *checkInput) { in.store.byNonce["n9"] = []int64{12} },
			func(r *result) int { return r.Phantom }, "no client sent"},
		{"valid token refused", func(in *checkInput) {
			in.ops = append(in.ops, &op{Kind: "post", Agent: "a", Nonce: "n3", Outcome: failed, Code: codes.Unauthenticated})
		}, func(r *result) int { return r.ValidRefused }, "valid token"},
		{"cron slot twice", func(in *checkInput) {
			in.store.cronRuns = []cronRun{{"j", 100, true}, {"j", 100, true}}
			in.store.cronMsgs = 2
		}, func(r *result) int { return r.LeaderOverlaps }, "ran more than once"},
		{"cron message twice", func(in *checkInput) {
			in.store.cronRuns = []cronRun{{"j", 100, true}}
			in.store.cronMsgs = 2
		}, func(r *result) int { return r.LeaderOverlaps }, "2 cron messages for 1"},
		{"ticks of two replicas overlap", func(in *checkInput) {
			in.ticks = []tickSample{{Replica: 1, At: at(0), Micros: 50_000}, {Replica: 2, At: at(30), Micros: 10_000}}
			in.tickErrors = map[int][]time.Time{1: {at(-500)}, 2: {at(5000)}} // errors of other ticks
		}, func(r *result) int { return r.LeaderOverlaps }, "ticks overlap"},
		{"reservations overlap", func(in *checkInput) {
			in.ops = append(in.ops,
				&op{Kind: "reserve", Agent: "a", Pattern: "area/1", Granted: true, ResID: "1", End: at(0), Expires: at(10_000)},
				&op{Kind: "release", Agent: "a", ResID: "1", Start: at(500)},
				&op{Kind: "reserve", Agent: "b", Pattern: "area/1", Granted: true, ResID: "2", End: at(400), Expires: at(10_400)})
		}, func(r *result) int { return r.ResOverlaps }, "both held area/1"},
		{"revoked token accepted", func(in *checkInput) {
			in.revocations = []*revocation{{Agent: "rv", Revoked: at(0), Accepted: map[int]time.Time{2: at(3500)}}}
		}, func(r *result) int { return r.RevokedAccept }, "revoked token"},
		{"not converged", func(in *checkInput) {
			in.faults = []*fault{{Kind: "pg-kill", Target: "pg", ConvergeErr: "not converged within 1m0s"}}
		}, func(r *result) int { return r.NotConverged }, "not converged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := clean()
			tc.spoil(&in)
			r := check(in)
			if tc.count(r) == 0 || r.failures() == 0 {
				t.Fatalf("not found: %+v", r)
			}
			if !strings.Contains(strings.Join(r.Problems, "\n"), tc.want) {
				t.Errorf("problems %q do not say %q", r.Problems, tc.want)
			}
		})
	}
}

// A stale leader's tick, whose writes were refused, failed: it does not
// overlap the new leader's.
func TestFailedTickIsNoLeadership(t *testing.T) {
	in := clean()
	in.ticks = []tickSample{{Replica: 1, At: at(0), Micros: 27_000_000}, {Replica: 2, At: at(6000), Micros: 10_000}}
	in.tickErrors = map[int][]time.Time{1: {at(27_010)}}
	if r := check(in); r.LeaderOverlaps != 0 {
		t.Errorf("leader overlaps = %d: %v", r.LeaderOverlaps, r.Problems)
	}
}

func TestReservationsHeldInTurnDoNotOverlap(t *testing.T) {
	in := clean()
	in.ops = append(in.ops,
		&op{Kind: "reserve", Agent: "a", Pattern: "area/1", Granted: true, ResID: "1", End: at(0), Expires: at(10_000)},
		&op{Kind: "release", Agent: "a", ResID: "1", Start: at(500)},
		&op{Kind: "reserve", Agent: "b", Pattern: "area/1", Granted: true, ResID: "2", End: at(600), Expires: at(10_600)},
		&op{Kind: "reserve", Agent: "a", Pattern: "area/2", Granted: true, ResID: "3", End: at(600), Expires: at(10_600)})
	if r := check(in); r.ResOverlaps != 0 {
		t.Errorf("overlaps = %d: %v", r.ResOverlaps, r.Problems)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want outcome
	}{
		{nil, ok},
		{status.Error(codes.InvalidArgument, "x"), failed},
		{status.Error(codes.Unauthenticated, "x"), failed},
		{status.Error(codes.Unavailable, "x"), unknown},
		{status.Error(codes.Internal, "x"), unknown},
		{status.Error(codes.DeadlineExceeded, "x"), unknown},
		{errors.New("connection reset"), unknown},
		{mcpError("cannot reach the hub at x"), unknown},
		{mcpError("the hub cannot serve this now (the hub cannot reach its database (x): y)"), unknown},
		{mcpError("invalid arguments: body"), failed},
		{mcpError("the hub refused this agent's token (x)"), failed},
	} {
		if got, _ := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

func TestSummaryLine(t *testing.T) {
	r := &result{Acked: 5, Unknown: 2, Lost: 1, Faults: []*fault{{Converge: 300 * time.Millisecond}, {Converge: 2 * time.Second}}}
	want := "faults: runs=1 faults=2 acked=5 unknown=2 lost=1 duplicated=0 reordered=0 leader_overlaps=0 converge_p99_ms=2000"
	if got := summary(1, []*result{r}); got != want {
		t.Errorf("summary =\n%s\nwant\n%s", got, want)
	}
	if got := percentile([]time.Duration{1, 2, 3, 4}, 50); got != 2 {
		t.Errorf("p50 of 1..4 = %d, want 2", got)
	}
}
