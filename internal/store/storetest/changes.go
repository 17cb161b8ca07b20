package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A write records the agents each message it inserts is delivered to
// (hub.ChangesTx), whichever insert it uses and whether or not it is
// marked hub.RowLocked (PostgreSQL writes those posts at the end of the
// batch), so that the hub wakes their parked waits at the commit; a
// message delivered to no agent records no one.
func testWritesRecordDeliveries(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	a, b, c := createAgent(t, db, "ann"), createAgent(t, db, "bob"), createAgent(t, db, "cat")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msg := func(to ...string) *hub.Message {
		return &hub.Message{From: "ann", To: to, Body: "hello", Kind: hub.KindMessage, CreatedAt: now}
	}
	for _, ctx := range []context.Context{context.Background(), hub.RowLocked(context.Background())} {
		var got hub.Changes
		if err := db.Update(ctx, func(tx hub.Tx) error {
			got = hub.Changes{}
			tx.Record(&got)
			defer tx.Record(nil)
			if err := tx.InsertMessage(msg("bob"), []hub.Delivery{{AgentID: b.ID}}); err != nil {
				return err
			}
			if err := tx.InsertMessage(msg(), nil); err != nil {
				return err
			}
			return tx.InsertMessages([]*hub.Message{msg("cat"), msg("ann", "bob")},
				[][]hub.Delivery{{{AgentID: c.ID}}, {{AgentID: a.ID}, {AgentID: b.ID, Mention: true}}})
		}); err != nil {
			t.Fatal(err)
		}
		ids := slices.Clone(got.Agents())
		slices.Sort(ids)
		if want := []int64{a.ID, b.ID, b.ID, c.ID}; !slices.Equal(ids, want) {
			t.Errorf("row-locked %v: recorded agents %v, want %v (ann, bob twice, cat)", hub.IsRowLocked(ctx), ids, want)
		}
	}
}

// A write records each inbox item it closes, once (a close of an item no
// longer open records nothing), and each task it leaves ready: inserted
// ready, updated ready, or released by its last dependency's completion;
// a task inserted waiting or claimed records nothing.
func testWritesRecordClosedItemsAndReadyTasks(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ann := createAgent(t, db, "ann")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	record := func(fn func(tx hub.Tx) error) *hub.Changes {
		t.Helper()
		var got hub.Changes
		if err := db.Update(context.Background(), func(tx hub.Tx) error {
			got = hub.Changes{}
			tx.Record(&got)
			defer tx.Record(nil)
			return fn(tx)
		}); err != nil {
			t.Fatal(err)
		}
		return &got
	}
	item := &hub.InboxItem{Kind: hub.KindApproval, AgentID: ann.ID, Project: hub.DefaultProject, Title: "Allow Bash?", Tool: "Bash", Urgency: hub.UrgencyNormal, State: hub.ItemOpen, CreatedAt: now}
	got := record(func(tx hub.Tx) error { return tx.InsertInboxItem(item) })
	if len(got.Items()) != 0 {
		t.Errorf("inserting an open item recorded items %v, want none", got.Items())
	}
	got = record(func(tx hub.Tx) error {
		for range 2 {
			if _, err := tx.CloseInboxItem(item.ID, hub.ItemAnswered, hub.ItemClose{At: now, By: "pat", Decision: hub.DecisionAllow}); err != nil {
				return err
			}
		}
		return nil
	})
	if want := []int64{item.ID}; !slices.Equal(got.Items(), want) {
		t.Errorf("closing item %d (then again) recorded items %v, want %v", item.ID, got.Items(), want)
	}

	task := func(title string, waiting int) *hub.Task {
		return &hub.Task{Project: hub.DefaultProject, Title: title, State: hub.TaskOpen, Waiting: waiting, Creator: "ann", CreatedAt: now, UpdatedAt: now}
	}
	first, second := task("first", 0), task("second", 1)
	got = record(func(tx hub.Tx) error {
		if err := tx.InsertTask(first); err != nil {
			return err
		}
		second.DependsOn = []int64{first.ID}
		return tx.InsertTask(second)
	})
	if ids := taskIDs(got.ReadyTasks()); !slices.Equal(ids, []int64{first.ID}) {
		t.Errorf("inserting a ready and a waiting task recorded ready tasks %v, want %v", ids, []int64{first.ID})
	}
	got = record(func(tx hub.Tx) error {
		ok, err := tx.ClaimTask(first.ID, ann.ID, now, now.Add(time.Hour))
		if err == nil && !ok {
			err = fmt.Errorf("task %d was not claimed", first.ID)
		}
		return err
	})
	if ids := taskIDs(got.ReadyTasks()); len(ids) != 0 {
		t.Errorf("claiming a task recorded ready tasks %v, want none", ids)
	}
	got = record(func(tx hub.Tx) error {
		done, err := tx.TaskByID(first.ID)
		if err != nil {
			return err
		}
		done.State, done.DoneAt = hub.TaskDone, now
		if err := tx.UpdateTask(done); err != nil {
			return err
		}
		_, err = tx.ReleaseDependents(first.ID, now)
		return err
	})
	if ids := taskIDs(got.ReadyTasks()); !slices.Equal(ids, []int64{second.ID}) {
		t.Errorf("completing task %d recorded ready tasks %v, want its dependent %d", first.ID, ids, second.ID)
	}
}
