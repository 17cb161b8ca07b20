package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

var errBoom = errors.New("boom")

// Update's contract: an error or a panic in fn rolls back fn's writes and
// only them, whatever else is being written at the same time; a write that
// returned nil is there for every later reader.
func testUpdateRollsBackOnlyItsOwnWrites(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	const n = 60
	fails := func(i int) bool { return i%10 == 3 }
	const panics = 7
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = db.Update(context.Background(), func(tx hub.Tx) error {
				name := fmt.Sprintf("agent-%03d", i)
				if err := tx.CreateAgent(&hub.Agent{Name: name, CreatedAt: t0}, hub.HashToken(name)); err != nil {
					return err
				}
				switch {
				case i == panics:
					panic("bad write")
				case fails(i):
					return fmt.Errorf("write %d: %w", i, errBoom)
				}
				return nil
			})
		})
	}
	wg.Wait()
	want := map[string]bool{}
	for i := range n {
		switch {
		case i == panics:
			if errs[i] == nil || !strings.Contains(errs[i].Error(), "panic") {
				t.Errorf("write %d (panics): error = %v, want a panic error", i, errs[i])
			}
		case fails(i):
			if !errors.Is(errs[i], errBoom) {
				t.Errorf("write %d (fails): error = %v, want %v", i, errs[i], errBoom)
			}
		default:
			if errs[i] != nil {
				t.Errorf("write %d: error = %v, want nil", i, errs[i])
			}
			want[fmt.Sprintf("agent-%03d", i)] = true
		}
	}
	got := agentNames(t, db)
	if len(got) != len(want) {
		t.Errorf("committed %d agents, want %d", len(got), len(want))
	}
	for _, name := range got {
		if !want[name] {
			t.Errorf("agent %s committed, want it rolled back", name)
		}
	}
	createAgent(t, db, "after-panic") // the store survived the panic
}

// Several processes (here: handles) may open a fresh database at once, for
// example replicas started together; each ends up on the full schema.
func testOpenConcurrently(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	const n = 4
	dbs := make([]hub.Store, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dbs[i] = open() })
	}
	wg.Wait()
	for i, db := range dbs {
		createAgent(t, db, fmt.Sprintf("agent-%d", i))
	}
	if got := len(agentNames(t, dbs[0])); got != n {
		t.Errorf("agents = %d, want %d", got, n)
	}
}

func testDataSurvivesReopen(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	db := open()
	alice := createAgent(t, db, "alice")
	bob := createAgent(t, db, "bob")
	m := &hub.Message{From: "alice", To: []string{"bob"}, Channel: "#ops", Body: "héllo\nworld", Mentions: []string{"bob"}, Kind: hub.KindMessage, CreatedAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error {
		ch, err := tx.EnsureChannel(hub.DefaultProject, "#ops", t0)
		if err != nil {
			return err
		}
		if err := tx.InsertChannelMember(ch, alice.ID, t0); err != nil {
			return err
		}
		if err := tx.SetMeta("beat", "42"); err != nil {
			return err
		}
		return tx.InsertMessage(m, []hub.Delivery{{AgentID: bob.ID, Mention: true}})
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open()
	mustView(t, db, func(tx hub.Tx) error {
		got, err := tx.AgentByName("alice")
		if err != nil {
			return err
		}
		if got.ID != alice.ID || !got.CreatedAt.Equal(t0) {
			t.Errorf("alice after reopen = %+v, want ID %d created %v", got, alice.ID, t0)
		}
		if _, err := tx.AgentByTokenHash(hub.HashToken("token-bob")); err != nil {
			t.Errorf("bob's token after reopen: %v", err)
		}
		gm, err := tx.MessageByID(m.ID)
		if err != nil {
			return err
		}
		if gm.Body != m.Body || gm.From != "alice" || fmt.Sprint(gm.To) != "[bob]" || gm.Channel != "#ops" ||
			fmt.Sprint(gm.Mentions) != "[bob]" || !gm.CreatedAt.Equal(t0) {
			t.Errorf("message after reopen = %+v, want %+v", gm, m)
		}
		if v, err := tx.Meta("beat"); err != nil || v != "42" {
			t.Errorf("Meta(beat) = %q, %v; want 42", v, err)
		}
		ch, err := tx.ChannelByName(hub.DefaultProject, "#ops")
		if err != nil {
			return err
		}
		names, err := tx.ChannelMemberNames(ch)
		if fmt.Sprint(names) != "[alice]" {
			t.Errorf("#ops members after reopen = %v, want [alice]", names)
		}
		return err
	})
}

// A second handle on the same database (another process) sees the first's
// commits as soon as Update returns, both ways, and writes from both at
// once all land.
func testSecondHandleSeesCommits(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	a, b := open(), open()
	for i := range 20 {
		w, r := a, b
		if i%2 == 1 {
			w, r = b, a
		}
		name := fmt.Sprintf("agent-%02d", i)
		createAgent(t, w, name)
		mustView(t, r, func(tx hub.Tx) error {
			_, err := tx.AgentByName(name)
			return err
		})
	}
	var wg sync.WaitGroup
	for i := range 40 {
		db := a
		if i%2 == 1 {
			db = b
		}
		wg.Go(func() {
			name := fmt.Sprintf("both-%02d", i)
			if err := db.Update(context.Background(), func(tx hub.Tx) error {
				return tx.CreateAgent(&hub.Agent{Name: name, CreatedAt: t0}, hub.HashToken(name))
			}); err != nil {
				t.Errorf("Update %s: %v", name, err)
			}
		})
	}
	wg.Wait()
	if got, want := len(agentNames(t, a)), 60; got != want {
		t.Errorf("agents seen by the first handle = %d, want %d", got, want)
	}
}

// View is read-only.
func testViewIsReadOnly(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	err := db.View(context.Background(), func(tx hub.Tx) error {
		return tx.CreateAgent(&hub.Agent{Name: "sneaky", CreatedAt: t0}, nil)
	})
	if err == nil {
		t.Error("CreateAgent inside View succeeded, want an error")
	}
	if got := agentNames(t, db); len(got) != 0 {
		t.Errorf("agents after a write in View = %v, want none", got)
	}
}
