package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// CountRows runs query, a SELECT COUNT(*) in the store's own SQL with its
// values written in, inside tx, and returns the count: the deletion tests
// look into every table, beyond what hub.Tx reads.
type CountRows func(tx hub.Tx, query string) (int64, error)

// RunAgentDelete runs the tests of hub.AgentDeleteTx against the store
// that newDB opens; count looks into its tables.
func RunAgentDelete(t *testing.T, newDB NewDB, count CountRows) {
	t.Run("DeleteAgentLeavesNoRow", func(t *testing.T) { testDeleteAgentLeavesNoRow(t, newDB, count) })
	t.Run("DeleteAgentNotFound", func(t *testing.T) { testDeleteAgentNotFound(t, newDB) })
}

// AgentTables is every table of the schema (copystore's list, which its
// test checks against this one), with the rows in it that belong to the
// deleted agent: "%[1]d" is its ID, "%[2]s" its name, "%[3]s" the IDs of
// its messages (those it sent, and the hub's that it alone received), and
// "%[4]d" the ID of the cron job targeting it. An empty condition: the
// table has no rows of an agent (it must come out of a deletion
// unchanged).
var AgentTables = []struct{ Name, Of string }{
	{"projects", ""},
	{"project_links", ""},
	{"agents", "id = %[1]d"},
	{"channels", ""},
	{"channel_members", "agent_id = %[1]d"},
	{"messages", "id IN (%[3]s)"},
	{"deliveries", "agent_id = %[1]d OR message_id IN (%[3]s)"},
	{"meta", ""},
	{"activity_logs", "agent_id = %[1]d"},
	{"checkpoints", "agent_id = %[1]d"},
	{"deep_work", "agent_id = %[1]d"},
	{"liveness", "agent_id = %[1]d"},
	{"events", "agent_id = %[1]d"},
	{"agent_checks", "agent_id = %[1]d"},
	{"pulses", "agent_id = %[1]d"},
	{"cron_jobs", "target = '%[2]s'"},
	{"cron_runs", "job_id = %[4]d"},
	{"reservations", "agent_id = %[1]d"},
	{"join_codes", ""},
	{"pulses_sent", "agent_id = %[1]d"},
	{"injections", "agent_id = %[1]d"},
	{"read_marks", "agent_id = %[1]d"},
	{"inbox_counts", "agent_id = %[1]d"},
	{"tasks", ""}, // the project's: its agent references go NULL
	{"task_deps", ""},
	{"task_watchers", "agent_id = %[1]d"},
	{"task_leases", ""},
	{"people", ""},
	{"inbox_items", "agent_id = %[1]d"},
	{"approval_rules", "agent_id = %[1]d"},
	{"webhooks", ""},
	{"webhook_deliveries", ""},
	{"agent_paths", "agent_id = %[1]d"},
	{"usage_minutes", "agent_id = %[1]d"},
	{"usage_days", "agent_id = %[1]d"},
	{"budgets", "agent_id = %[1]d"},
}

// agentData is what seedAgent wrote for one agent.
type agentData struct {
	agent *hub.Agent
	owned []int64 // the messages that go with it
	job   int64   // its cron job
	// byPeer are the messages its peers sent it, by sender.
	byPeer map[string][]int64
}

// seedAgent gives a a row in every table that holds an agent's rows, and
// sends messages from a to peers (direct, mentions, the channel ops,
// asking for acknowledgements). peers send to a as well; their messages
// stay when a is deleted.
func seedAgent(t *testing.T, db hub.Store, a *hub.Agent, ops int64, peers ...*hub.Agent) agentData {
	t.Helper()
	d := agentData{agent: a, byPeer: map[string][]int64{}}
	at := t0.Add(time.Minute)
	mustUpdate(t, db, func(tx hub.Tx) error {
		for i := range 3 {
			if err := tx.InsertActivityLog(&hub.ActivityLog{AgentID: a.ID, Type: hub.ActivityReflection, Title: fmt.Sprintf("log %d", i), HeartbeatID: "h", CreatedAt: at}); err != nil {
				return err
			}
			if err := tx.InsertCheckpoint(&hub.Checkpoint{AgentID: a.ID, CurrentActivity: "work", HeartbeatID: "h", CreatedAt: at}); err != nil {
				return err
			}
			if err := tx.InsertEvent(&hub.Event{AgentID: a.ID, Kind: hub.EventHealthChanged, Detail: "x", CreatedAt: at}); err != nil {
				return err
			}
		}
		dw := &hub.DeepWork{AgentID: a.ID, Mode: hub.DeepWorkFlexible, PlannedActivity: "focus", StartedAt: at, State: hub.DeepWorkActive}
		if err := tx.InsertDeepWork(dw); err != nil {
			return err
		}
		if err := tx.SaveLivenessState(&hub.LivenessState{AgentID: a.ID, CreatedAt: t0, ActiveDeepWork: dw}, at.Add(time.Hour)); err != nil {
			return err
		}
		if err := tx.PutAgentCheck(hub.AgentCheck{AgentID: a.ID, NextCheckAt: at, Episode: "e", NudgeCount: 1}); err != nil {
			return err
		}
		if err := tx.PutPulseConfig(hub.PulseConfig{AgentID: a.ID, Enabled: true, Interval: time.Hour, Instructions: "beat", UpdatedAt: at}, at); err != nil {
			return err
		}
		if _, err := tx.RecordPulse(a.ID, 1, at); err != nil {
			return err
		}
		if err := tx.InsertReservations([]*hub.Reservation{{AgentID: a.ID, Pattern: "src/" + a.Name, Mode: hub.ReservationExclusive, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}}); err != nil {
			return err
		}
		if err := tx.InsertChannelMember(ops, a.ID, at); err != nil {
			return err
		}
		if err := tx.PutInjectionState(hub.InjectionState{AgentID: a.ID, UpTo: 1, UpdatedAt: at}); err != nil {
			return err
		}
		task := &hub.Task{Project: hub.DefaultProject, Title: "task of " + a.Name, State: hub.TaskClaimed, Priority: hub.PriorityNormal,
			Creator: a.Name, CreatorID: a.ID, AssigneeID: a.ID, CreatedAt: at, ClaimedAt: at, UpdatedAt: at, LeaseDue: at.Add(time.Hour)}
		if err := tx.InsertTask(task); err != nil {
			return err
		}
		if err := tx.AddTaskWatcher(task.ID, a.ID); err != nil {
			return err
		}
		item := &hub.InboxItem{Kind: hub.KindApproval, AgentID: a.ID, Project: hub.DefaultProject, Title: "Allow Bash?", Tool: "Bash", Urgency: hub.UrgencyNormal, State: hub.ItemOpen, CreatedAt: at}
		if err := tx.InsertInboxItem(item); err != nil {
			return err
		}
		for _, agent := range []int64{a.ID, 0} { // its own rule goes, the project's stays
			if err := tx.InsertApprovalRule(&hub.ApprovalRule{Project: hub.DefaultProject, AgentID: agent, Tool: "Bash", CreatedBy: "operator", CreatedAt: at, ExpiresAt: at.Add(time.Hour), ItemID: item.ID}); err != nil {
				return err
			}
		}
		if err := tx.PutPaths([]hub.PathRow{{AgentID: a.ID, Via: hub.ViaWait, LastSeenAt: at, LiveUntil: at.Add(time.Minute), Replica: "r"}}, at); err != nil {
			return err
		}
		if err := tx.PutNoticeCounts(map[int64]hub.NoticeCount{a.ID: {Window: at.Truncate(time.Hour), Sent: 1}}); err != nil {
			return err
		}
		u := []hub.UsageRollup{{AgentID: a.ID, Project: a.Project, At: at.Truncate(time.Minute), TaskID: task.ID, Model: "m", Counts: hub.UsageCounts{Input: 1, Requests: 1}}}
		if err := tx.AddUsage(u, u); err != nil {
			return err
		}
		if err := tx.PutBudget(&hub.Budget{AgentID: a.ID, USDPerDay: 5, SetBy: "operator", UpdatedAt: at}); err != nil {
			return err
		}
		j := &hub.CronJob{Name: "remind-" + a.Name, Kind: hub.CronEvery, EverySeconds: 3600, Anchor: t0, Target: a.Name, Message: "stand-up", Enabled: true, CreatedAt: at, UpdatedAt: at}
		if err := tx.CreateCronJob(j); err != nil {
			return err
		}
		d.job = j.ID
		return tx.InsertCronRun(&hub.CronRun{JobID: j.ID, JobName: j.Name, ScheduledAt: at, RanAt: at, Status: hub.CronRunOK})
	})
	// Its messages, between the others' (so batches read mixed windows).
	for i := range 4 {
		to := peers[i%len(peers)]
		m := &hub.Message{From: a.Name, To: []string{to.Name}, Body: "zebra " + a.Name, Mentions: []string{to.Name}, AckRequired: true, Kind: hub.KindMessage, CreatedAt: t0}
		mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertMessage(m, []hub.Delivery{{AgentID: to.ID, Mention: true}}) })
		d.owned = append(d.owned, m.ID)
		d.byPeer[to.Name] = append(d.byPeer[to.Name], post(t, db, hub.Message{From: to.Name, Body: "yak " + a.Name}, a))
		d.owned = append(d.owned, post(t, db, hub.Message{From: a.Name, Channel: "#ops", Body: "zebra ops " + a.Name}, peers...))
	}
	d.owned = append(d.owned, post(t, db, hub.Message{From: hub.SenderOrchestrator, Kind: hub.KindNudge, Body: "nudge " + a.Name}, a))
	post(t, db, hub.Message{From: hub.SenderOrchestrator, Kind: hub.KindNudge, Body: "nudge both"}, append([]*hub.Agent{a}, peers...)...)
	// Receipts by it: delivered, read (a read mark and its cursor), acknowledged.
	mustUpdate(t, db, func(tx hub.Tx) error {
		ms, err := tx.Inbox(a.ID, hub.InboxQuery{Limit: 100})
		if err != nil || len(ms) < 2 {
			return fmt.Errorf("inbox of %s: %d messages, %v", a.Name, len(ms), err)
		}
		if err := tx.MarkDelivered(a.ID, ids(ms), at); err != nil {
			return err
		}
		if err := tx.RecordRead(a.ID, ms[1].ID, at); err != nil {
			return err
		}
		cur, err := tx.AgentByID(a.ID)
		if err != nil {
			return err
		}
		cur.ReadUpTo = ms[1].ID
		return tx.UpdateAgent(cur)
	})
	for _, p := range peers {
		mustUpdate(t, db, func(tx hub.Tx) error {
			_, _, err := tx.Acknowledge(p.ID, d.owned[0], at)
			if hub.ErrorCode(err) == hub.ENOTFOUND { // not one of p's
				return nil
			}
			return err
		})
	}
	return d
}

// rowsOf counts, per table, the rows of d's agent and the others' rows.
func rowsOf(t *testing.T, db hub.Store, count CountRows, d agentData) (its, others map[string]int64) {
	t.Helper()
	its, others = map[string]int64{}, map[string]int64{}
	owned := make([]string, len(d.owned))
	for i, id := range d.owned {
		owned[i] = fmt.Sprint(id)
	}
	mustView(t, db, func(tx hub.Tx) error {
		for _, tb := range AgentTables {
			all, err := count(tx, "SELECT COUNT(*) FROM "+tb.Name)
			if err != nil {
				return fmt.Errorf("count %s: %w", tb.Name, err)
			}
			if tb.Of != "" {
				cond := fmt.Sprintf(tb.Of, d.agent.ID, d.agent.Name, strings.Join(owned, ", "), d.job)
				if its[tb.Name], err = count(tx, "SELECT COUNT(*) FROM "+tb.Name+" WHERE "+cond); err != nil {
					return fmt.Errorf("count %s WHERE %s: %w", tb.Name, cond, err)
				}
			}
			others[tb.Name] = all - its[tb.Name]
		}
		return nil
	})
	return its, others
}

// deleteAgent deletes d's agent through hub.AgentDeleteTx in batches of
// limit rows reading scan messages, as hub.Service.DeleteAgent does;
// late is posted after the last batch of sent messages.
func deleteAgent(t *testing.T, db hub.Store, a *hub.Agent, scan, limit int, late func()) (sent, rows int64) {
	t.Helper()
	var after int64
	for {
		var b hub.SentBatch
		mustUpdate(t, db, func(tx hub.Tx) (err error) {
			b, err = tx.DeleteSentMessages(a.Name, after, scan, limit)
			return err
		})
		if b.Deleted > int64(limit) {
			t.Fatalf("a batch of at most %d deleted %d messages", limit, b.Deleted)
		}
		sent, after = sent+b.Deleted, b.Next
		if b.Done {
			break
		}
	}
	late() // after the last batch: only DeleteAgent can find it
	for {
		var n int64
		mustUpdate(t, db, func(tx hub.Tx) (err error) {
			n, err = tx.DeleteAgentRows(a.ID, limit)
			return err
		})
		if n > int64(limit) {
			t.Fatalf("a batch of at most %d deleted %d rows", limit, n)
		}
		if rows += n; n < int64(limit) {
			break
		}
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		n, err := tx.DeleteAgent(a, after)
		sent += n
		return err
	})
	return sent, rows
}

// testDeleteAgentLeavesNoRow: an agent with rows in every table that holds
// an agent's rows is deleted in small batches (a message it sends after
// the batches of its messages included); no row of it is left in any table, the others'
// rows are all there, their unread counters equal a full count, no search
// finds its messages, and an agent registered again under its name starts
// empty.
func testDeleteAgentLeavesNoRow(t *testing.T, h NewDB, count CountRows) {
	t.Parallel()
	db := fresh(t, h)
	bob, alice, carol := createAgent(t, db, "bob"), createAgent(t, db, "alice"), createAgent(t, db, "carol")
	var ops int64
	mustUpdate(t, db, func(tx hub.Tx) (err error) { ops, err = tx.EnsureChannel(hub.DefaultProject, "#ops", t0); return err })
	gone := seedAgent(t, db, bob, ops, alice, carol)
	kept := seedAgent(t, db, alice, ops, bob, carol)
	gone.owned = append(gone.owned, kept.byPeer["bob"]...)
	its, othersBefore := rowsOf(t, db, count, gone)
	for _, tb := range AgentTables {
		if tb.Of != "" && its[tb.Name] == 0 {
			t.Errorf("the seed wrote no row of bob in %s: the test would not see one left", tb.Name)
		}
	}

	sent, rows := deleteAgent(t, db, bob, 3, 2, func() {
		gone.owned = append(gone.owned, post(t, db, hub.Message{From: "bob", Body: "zebra late"}, alice))
	})
	if want := int64(8 + 2 + 1); sent != want { // 8 seeded, 2 to alice, 1 late; the nudge only bob had counts as a row
		t.Errorf("deleted %d messages it sent, want %d", sent, want)
	}
	if rows == 0 {
		t.Error("the row batches deleted nothing")
	}
	left, othersAfter := rowsOf(t, db, count, gone)
	for _, tb := range AgentTables {
		if left[tb.Name] != 0 {
			t.Errorf("%s: %d rows of bob left (of %d)", tb.Name, left[tb.Name], its[tb.Name])
		}
		if othersAfter[tb.Name] != othersBefore[tb.Name] {
			t.Errorf("%s: %d rows of the others after, %d before", tb.Name, othersAfter[tb.Name], othersBefore[tb.Name])
		}
	}
	keptRows, _ := rowsOf(t, db, count, kept)
	for _, tb := range AgentTables {
		if tb.Of != "" && keptRows[tb.Name] == 0 {
			t.Errorf("%s: no row of alice is left", tb.Name)
		}
	}
	checkCounts(t, db, []*hub.Agent{alice, carol}, "after the deletion")
	c := &searchCorpus{db: db}
	for _, q := range []hub.SearchQuery{{}, {ReaderID: alice.ID}, {ReaderID: carol.ID}} {
		if got := c.find(t, "zebra bob", q); len(got) != 0 {
			t.Errorf("search for bob's words (reader %d) = %v, want nothing", q.ReaderID, got)
		}
	}
	if got := c.find(t, "yak bob", hub.SearchQuery{}); len(got) != 4 {
		t.Errorf("the messages sent to bob: search finds %v, want the 4 (they stay for their senders)", got)
	}

	again := createAgent(t, db, "bob")
	mustView(t, db, func(tx hub.Tx) error {
		ms, err := tx.Inbox(again.ID, hub.InboxQuery{Limit: 100})
		if err != nil || len(ms) != 0 {
			t.Errorf("the new bob's inbox = %v, %v; want empty", ids(ms), err)
		}
		unread, mentions, latest, err := tx.InboxCounts(again.ID, 0)
		if err != nil || unread+mentions+latest != 0 {
			t.Errorf("the new bob's counts = %d, %d, %d, %v; want 0", unread, mentions, latest, err)
		}
		logs, err := tx.RecentActivityLogs(again.ID, 10)
		if err != nil || len(logs) != 0 {
			t.Errorf("the new bob's activity logs = %d, %v; want none", len(logs), err)
		}
		return nil
	})
	if got := c.find(t, "yak", hub.SearchQuery{ReaderID: again.ID}); len(got) != 0 {
		t.Errorf("the new bob finds the old bob's messages: %v", got)
	}
}

// testDeleteAgentNotFound: deleting an agent that is not there (any more)
// is ENOTFOUND, and the batches find nothing to do.
func testDeleteAgentNotFound(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ghost := &hub.Agent{ID: 999, Name: "ghost"}
	err := db.Update(context.Background(), func(tx hub.Tx) error {
		b, err := tx.DeleteSentMessages(ghost.Name, 0, 10, 10)
		if err != nil || b.Deleted != 0 || !b.Done {
			t.Errorf("DeleteSentMessages of nobody = %+v, %v; want nothing deleted, done", b, err)
		}
		if n, err := tx.DeleteAgentRows(ghost.ID, 10); n != 0 || err != nil {
			t.Errorf("DeleteAgentRows of nobody = %d, %v", n, err)
		}
		_, err = tx.DeleteAgent(ghost, 0)
		return err
	})
	if hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("DeleteAgent of nobody: %v, want ENOTFOUND", err)
	}
}
