package hub_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A write wakes the parked waits of the agents its messages reach only
// once it has committed: a write that rolls back after inserting a message
// to bob wakes none of bob's waits; a committed post to bob wakes his
// parked wait, which returns the message, and signals each of his waits
// once.
func TestWakeFromCommit(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	ann, _ := h.agent(t, "ann")
	bob, _ := h.agent(t, "bob")
	w := h.register(t, bob.ID)

	changedMind := errors.New("changed my mind")
	err := h.Core.Update(ctx, func(tx hub.Tx) error {
		m := &hub.Message{Project: hub.ProjectOr(""), From: ann.Name, SenderKind: hub.ByAgent, To: []string{bob.Name}, Body: "never sent", Kind: hub.KindMessage, CreatedAt: h.Clock.Now()}
		if err := tx.InsertMessage(m, []hub.Delivery{{AgentID: bob.ID}}); err != nil {
			return err
		}
		return changedMind
	})
	if !errors.Is(err, changedMind) {
		t.Fatalf("the rolled-back write returned %v, want its own error", err)
	}
	select {
	case <-w.C():
		t.Fatal("a write that rolled back woke bob's wait")
	default:
	}

	got := make(chan *hub.WaitResult, 1)
	go func() {
		r, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(30)})
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	waitFor(t, "bob's wait to park", func() bool { return h.Waiters.AgentCount(bob.ID) == 2 })
	m, err := h.Post(ctx, ann, "", hub.PostRequest{To: []string{bob.Name}, Body: "sent"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C():
	default:
		t.Fatal("a committed post to bob did not wake his wait")
	}
	select {
	case <-w.C():
		t.Fatal("a committed post to bob woke his wait twice")
	default:
	}
	r := <-got // the fake clock stands still: only the wake-up ends the wait
	if r == nil || r.TimedOut || len(r.Messages) != 1 || r.Messages[0].ID != m.ID {
		t.Fatalf("bob's parked wait returned %+v, want the post %d alone", r, m.ID)
	}
}

// An answer and a ready task wake the calls parked for them only once the
// write has committed: a write that closes bob's approval, or creates a
// ready task, and then rolls back wakes neither the call parked on the
// approval nor the next_task call parked on the project; the committed
// answer wakes them and ends bob's parked approval with the decision, and
// the committed task wakes them and hands bob's parked next_task the task.
// The fake clock stands still: only the wake-ups end the parked calls.
func TestWakeFromCommitAnswersAndReadyTasks(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	_, tok := h.agent(t, "bob")
	bob := h.auth(t, tok)
	project := hub.ProjectOr(bob.Project)
	changedMind := errors.New("changed my mind")
	rollback := func(what string, fn func(tx hub.Tx) error) {
		t.Helper()
		err := h.Core.Update(ctx, func(tx hub.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return changedMind
		})
		if !errors.Is(err, changedMind) {
			t.Fatalf("the rolled-back write that %s returned %v, want its own error", what, err)
		}
	}

	timers := h.Clock.Timers()
	approval := make(chan *hub.ApprovalResult, 1)
	go func() {
		r, err := h.Inbox.RequestApproval(ctx, bob, hub.ApprovalRequest{Tool: "Bash", Wait: 20 * time.Second})
		if err != nil {
			t.Error(err)
		}
		approval <- r
	}()
	waitFor(t, "bob's approval parked", func() bool { return h.Clock.Timers() > timers })
	items, _, err := h.Inbox.ListItems(ctx, nil, "open", "", 10, "")
	if err != nil || len(items) != 1 {
		t.Fatalf("open items = %v, %v; want bob's approval", items, err)
	}
	id := items[0].ID
	onItem, done, err := h.Waiters.ParkOnItem(id, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	rollback("answers the approval", func(tx hub.Tx) error {
		ok, err := tx.CloseInboxItem(id, hub.ItemAnswered, hub.ItemClose{At: h.Clock.Now(), By: "pat", Decision: hub.DecisionAllow})
		if err == nil && !ok {
			err = fmt.Errorf("approval %d was not open", id)
		}
		return err
	})
	select {
	case <-onItem:
		t.Fatal("a write that rolled back its answer woke the call parked on the approval")
	case r := <-approval:
		t.Fatalf("a write that rolled back its answer ended bob's approval: %+v", r)
	default:
	}
	if _, err := h.Inbox.AnswerItem(ctx, nil, id, hub.Answer{Decision: hub.DecisionAllow}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-onItem:
	default:
		t.Fatal("a committed answer did not wake the call parked on the approval")
	}
	if r := <-approval; r == nil || r.TimedOut || r.Item.Decision != hub.DecisionAllow {
		t.Fatalf("bob's parked approval returned %+v, want it allowed", r)
	}

	w := h.register(t, bob.ID)
	defer h.Waiters.ParkTask(w, project)()
	next := make(chan *hub.NextResult, 1)
	go func() {
		r, err := h.Tasks.Next(ctx, bob, hub.NextRequest{Wait: 30 * time.Second})
		if err != nil {
			t.Error(err)
		}
		next <- r
	}()
	waitFor(t, "bob's next_task parked", func() bool { return h.Waiters.AgentCount(bob.ID) == 2 })
	rollback("creates a ready task", func(tx hub.Tx) error {
		return tx.InsertTask(&hub.Task{Project: project, Title: "never made", State: hub.TaskOpen, Creator: hub.SenderAdmin, CreatedAt: h.Clock.Now(), UpdatedAt: h.Clock.Now()})
	})
	select {
	case <-w.C():
		t.Fatal("a write that rolled back its ready task woke a parked next_task call")
	case r := <-next:
		t.Fatalf("a write that rolled back its ready task ended bob's parked next_task: %+v", r)
	default:
	}
	task, err := h.Tasks.Create(ctx, nil, project, hub.TaskSpec{Title: "work"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C():
	default:
		t.Fatal("a committed ready task did not wake a parked next_task call")
	}
	if r := <-next; r == nil || r.Task == nil || r.Task.ID != task.ID {
		t.Fatalf("bob's parked next_task returned %+v, want task %d", r, task.ID)
	}
}

// A token's revocation is made from the write's record at the commit: a
// write that changes bob's token and records it, then rolls back, leaves
// bob's parked wait parked and his cached token working; the same write
// committed ends the wait with EUNAUTHORIZED and refuses the old token at
// once, although it was cached and the fake clock stands still (the cache
// would trust it for its whole lifetime).
func TestRevocationFromCommit(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	_, tok := h.agent(t, "bob")
	bob := h.auth(t, tok) // cached from now on
	c := h.parkedWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})

	rotate := func(tx hub.Tx) error {
		_, hash := hub.NewToken()
		if err := tx.SetAgentToken(bob.ID, hash); err != nil {
			return err
		}
		tx.Recording().AgentChanged(bob.ID, hub.TokenChanged)
		return nil
	}
	changedMind := errors.New("changed my mind")
	err := h.Core.Update(ctx, func(tx hub.Tx) error {
		if err := rotate(tx); err != nil {
			return err
		}
		return changedMind
	})
	if !errors.Is(err, changedMind) {
		t.Fatalf("the rolled-back write returned %v, want its own error", err)
	}
	if n := h.Waiters.AgentCount(bob.ID); n != 1 {
		t.Fatalf("after a rotation rolled back bob has %d parked waits, want 1", n)
	}
	h.auth(t, tok) // still bob's token

	if err := h.Core.Update(ctx, rotate); err != nil {
		t.Fatal(err)
	}
	r := result(t, c)
	wantCode(t, "parked wait after the committed rotation", r.err, hub.EUNAUTHORIZED)
	_, err = h.Authenticate(ctx, tok)
	wantCode(t, "the old token after the committed rotation", err, hub.EUNAUTHORIZED)
}

// A context from WithCommits is told of the writes that commit under it
// (or under a context made from it), not of reads, of writes that roll
// back, nor of writes under another context.
func TestWithCommits(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ann, _ := h.agent(t, "ann")
	ctx, commits := hub.WithCommits(context.Background())
	if _, err := h.TakeInjection(ctx, ann, 0); err != nil { // nothing new: a read
		t.Fatal(err)
	}
	h.Core.Update(ctx, func(hub.Tx) error { return errors.New("rolled back") })
	if _, err := h.Heartbeat(context.Background(), ann); err != nil {
		t.Fatal(err)
	}
	if commits.Any() {
		t.Fatal("a read, a write that rolled back and another context's write were told as commits")
	}
	if _, err := h.Heartbeat(context.WithoutCancel(ctx), ann); err != nil {
		t.Fatal(err)
	}
	if !commits.Any() {
		t.Error("a heartbeat under a context made from the marked one was not told")
	}
}
