// Package storetest is the conformance suite of hub.Store: the same tests,
// run by every store package (internal/store/sqlite always,
// internal/store/postgres when a test database is configured). A store
// package's test calls Run with a NewDB that gives each test a fresh,
// empty database.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// NewDB creates a fresh, empty database for tb and returns a function that
// opens a handle on it. Each call opens another handle, as another hub
// process would; every handle is closed when tb ends (closing one earlier
// is allowed).
type NewDB func(tb testing.TB) (open func() hub.Store)

// Run runs the whole suite against the store that newDB opens.
func Run(t *testing.T, newDB NewDB) {
	tests := []struct {
		name string
		fn   func(*testing.T, NewDB)
	}{
		{"AgentRoundTrip", testAgentRoundTrip},
		{"AgentNotFound", testAgentNotFound},
		{"Addressees", testAddressees},
		{"ConstraintErrors", testConstraintErrors},
		{"ListAgents", testListAgents},
		{"SetAgentToken", testSetAgentToken},
		{"TouchAgents", testTouchAgents},
		{"StartHeartbeat", testStartHeartbeat},
		{"ReadCursor", testReadCursor},
		{"Inbox", testInbox},
		{"InboxCounts", testInboxCounts},
		{"LookInbox", testLookInbox},
		{"InboxCountsMatchFullCount", testInboxCountsMatchFullCount},
		{"RowLockedWritesLoseNoUpdate", testRowLockedWritesLoseNoUpdate},
		{"WritesRecordDeliveries", testWritesRecordDeliveries},
		{"WritesRecordClosedItemsAndReadyTasks", testWritesRecordClosedItemsAndReadyTasks},
		{"ListMessagesAndRecipients", testListMessagesAndRecipients},
		{"Channels", testChannels},
		{"ListChannels", testListChannels},
		{"Meta", testMeta},
		{"SwapMeta", testSwapMeta},
		{"ClaimNudgeOnce", testClaimNudgeOnce},
		{"ClaimNudgesBatch", testClaimNudgesBatch},
		{"NoticeCountInCheck", testNoticeCountInCheck},
		{"RecordPulseOnce", testRecordPulseOnce},
		{"LivenessStateRoundTrip", testLivenessStateRoundTrip},
		{"OverviewRows", testOverviewRows},
		{"DeepWorkOneActive", testDeepWorkOneActive},
		{"ListDeepWorkAndEvents", testListDeepWorkAndEvents},
		{"ActivityLogsAndCheckpoints", testActivityLogsAndCheckpoints},
		{"Schedule", testSchedule},
		{"Sweep", testSweep},
		{"UpdateRollsBackOnlyItsOwnWrites", testUpdateRollsBackOnlyItsOwnWrites},
		{"OpenConcurrently", testOpenConcurrently},
		{"DataSurvivesReopen", testDataSurvivesReopen},
		{"SecondHandleSeesCommits", testSecondHandleSeesCommits},
		{"ViewIsReadOnly", testViewIsReadOnly},
		{"CursorsNeverSkip", testCursorsNeverSkip},
		{"DeleteMessagesBefore", testDeleteMessagesBefore},
		{"Reservations", testReservations},
		{"ReservationRace", testReservationRace},
		{"JoinCodes", testJoinCodes},
		{"JoinCodeRace", testJoinCodeRace},
		{"InjectionState", testInjectionState},
		{"TakeInjectionRace", testTakeInjectionRace},
		{"SearchWords", testSearchWords},
		{"SearchFilters", testSearchFilters},
		{"SearchForgetsDeleted", testSearchForgetsDeleted},
		{"SearchReaders", testSearchReaders},
		{"SearchSkipsNotices", testSearchSkipsNotices},
		{"PriorityRoundTrip", testPriorityRoundTrip},
		{"Receipts", testReceipts},
		{"OverdueAcks", testOverdueAcks},
		{"InContext", testInContext},
		{"HeldDigests", testHeldDigests},
		{"Paths", testPaths},
		{"Retirement", testRetirement},
		{"Notices", testNotices},
		{"Projects", testProjects},
		{"TaskStore", testTaskStore},
		{"TaskClaimRace", testTaskClaimRace},
		{"TaskRules", testTaskRules},
		{"InboxItems", testInboxItems},
		{"ApprovalRules", testApprovalRules},
		{"People", testPeople},
		{"Webhooks", testWebhooks},
		{"Usage", testUsage},
		{"UsageByHour", testUsageByHour},
		{"Budgets", testBudgets},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newDB) })
	}
}

// t0 is the time the store tests write; any fixed instant will do (its
// nanoseconds check that times come back exactly). In time.Local, as the
// stores return times.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC).Local()

// fresh opens a store on a fresh database.
func fresh(tb testing.TB, h NewDB) hub.Store {
	tb.Helper()
	return h(tb)()
}

// mustUpdate runs fn in a write transaction and fails the test on error.
func mustUpdate(tb testing.TB, db hub.Store, fn func(tx hub.Tx) error) {
	tb.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		tb.Fatalf("Update: %v", err)
	}
}

// mustView runs fn in a read transaction and fails the test on error.
func mustView(tb testing.TB, db hub.Store, fn func(tx hub.Tx) error) {
	tb.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		tb.Fatalf("View: %v", err)
	}
}

// createAgent inserts an agent named name with a token hash derived from it.
func createAgent(tb testing.TB, db hub.Store, name string) *hub.Agent {
	tb.Helper()
	a := &hub.Agent{Name: name, CreatedAt: t0}
	mustUpdate(tb, db, func(tx hub.Tx) error { return tx.CreateAgent(a, hub.HashToken("token-"+name)) })
	if a.ID == 0 {
		tb.Fatalf("CreateAgent(%s) left ID 0", name)
	}
	return a
}

// agentNames lists every agent's name (disabled included).
func agentNames(tb testing.TB, db hub.Store) []string {
	tb.Helper()
	var names []string
	mustView(tb, db, func(tx hub.Tx) error {
		as, err := tx.ListAgents(true)
		for _, a := range as {
			names = append(names, a.Name)
		}
		return err
	})
	return names
}
