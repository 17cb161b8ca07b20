package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// AgentOverviews: every agent with its health, unread counts and parked
// waits; ListActivity: newest first, bounded; bad input refused.
func TestAgentOverviewsAndActivity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newTestHub(t)
	busy, _ := h.agent(t, "busy")
	quiet, _ := h.agent(t, "quiet")
	if _, err := h.Post(ctx, busy, busy.Name, hub.PostRequest{To: []string{"quiet"}, Body: "ping @quiet"}); err != nil {
		t.Fatal(err)
	}
	for i, title := range []string{"first", "second", "third"} {
		h.Clock.Advance(time.Minute)
		if _, err := h.CreateActivityLog(ctx, busy, hub.ActivityLog{Type: hub.ActivityCreation, Title: title}); err != nil {
			t.Fatalf("log %d: %v", i, err)
		}
	}
	if _, err := h.Checkpoint(ctx, busy, "still on it", 0); err != nil {
		t.Fatal(err)
	}
	w, err := h.Waiters.Register(quiet.ID, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	h.Clock.Advance(11 * time.Minute) // quiet: no activity since creation

	ovs, err := h.AgentOverviews(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]hub.AgentOverview{}
	for _, o := range ovs {
		by[o.Agent.Name] = o
	}
	if len(by) != 2 {
		t.Fatalf("overviews of %d agents, want 2", len(by))
	}
	if o := by["quiet"]; o.Unread != 1 || o.Mentions != 1 || o.ParkedWaits != 1 || o.Health.Health.State != hub.HealthAnomaly {
		t.Errorf("quiet: unread %d mentions %d parked %d health %s, want 1 1 1 anomaly", o.Unread, o.Mentions, o.ParkedWaits, o.Health.Health.State)
	}
	if o := by["busy"]; o.Unread != 0 || o.ParkedWaits != 0 || o.Health.LastActivityAt.IsZero() {
		t.Errorf("busy: unread %d parked %d last activity %v", o.Unread, o.ParkedWaits, o.Health.LastActivityAt)
	}

	logs, cps, err := h.ListActivity(ctx, "busy", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 2 || logs[0].Title != "third" || logs[1].Title != "second" {
		t.Errorf("logs = %v, want third, second", titles(logs))
	}
	if len(cps) != 1 || cps[0].CurrentActivity != "still on it" {
		t.Errorf("checkpoints = %+v", cps)
	}
	for _, c := range []struct {
		name  string
		limit int
		code  string
	}{{"nobody", 0, hub.ENOTFOUND}, {"Bad Name", 0, hub.EINVALID}, {"busy", -1, hub.EINVALID}} {
		_, _, err := h.ListActivity(ctx, c.name, c.limit)
		if got := hub.ErrorCode(err); got != c.code {
			t.Errorf("ListActivity(%q, %d): %v, want %s", c.name, c.limit, err, c.code)
		}
	}
}

func titles(ls []*hub.ActivityLog) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Title)
	}
	return out
}

// EndDeepWork ends an agent's deep work as an admin, records it, and
// refuses when none is active.
func TestEndDeepWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newTestHub(t)
	a, _ := h.agent(t, "diver")
	if _, err := h.EndDeepWork(ctx, "diver"); hub.ErrorCode(err) != hub.EPRECONDITION {
		t.Errorf("without deep work: %v, want EPRECONDITION", err)
	}
	if _, err := h.StartDeepWork(ctx, a, hub.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "parser", PlannedMinutes: 30}); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(5 * time.Minute)
	d, err := h.EndDeepWork(ctx, "diver")
	if err != nil {
		t.Fatal(err)
	}
	if d.State != hub.DeepWorkCompleted || d.EndReason != hub.EndedByAdmin || !d.EndedAt.Equal(h.Clock.Now()) {
		t.Errorf("ended = %+v, want completed by admin now", d)
	}
	cur, _, err := h.DeepWork(ctx, a, 5)
	if err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Errorf("deep work still active: %+v", cur)
	}
	evs, err := h.ListEvents(ctx, hub.ListEventsRequest{Agent: "diver", Kind: string(hub.EventDeepWorkCompleted)})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Detail != `strict deep work "parser" ended by an admin` {
		t.Errorf("events = %+v", evs)
	}
	if _, err := h.EndDeepWork(ctx, "nobody"); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("unknown agent: %v", err)
	}
	var he *hub.Error
	if _, err := h.EndDeepWork(ctx, ""); !errors.As(err, &he) || he.Code != hub.EINVALID {
		t.Errorf("empty name: %v", err)
	}
}

// AdminList with Newest: the newest messages, oldest first, the cursor at
// the newest, has_more when older ones exist; after_id follows from there.
func TestAdminListNewest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newTestHub(t)
	a, _ := h.agent(t, "a")
	h.agent(t, "b")
	var ids []string
	for i := range 5 {
		to := "b"
		if i%2 == 1 {
			to = "a"
		}
		m, err := h.Post(ctx, a, a.Name, hub.PostRequest{To: []string{to}, Body: "m"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, hub.FormatMessageID(m.ID))
	}
	idsOf := func(ms []*hub.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, hub.FormatMessageID(m.ID))
		}
		return out
	}
	for _, c := range []struct {
		req  hub.AdminListRequest
		want []string
		more bool
	}{
		{hub.AdminListRequest{Newest: true, Limit: 2}, ids[3:], true},
		{hub.AdminListRequest{Newest: true, Limit: 10}, ids, false},
		{hub.AdminListRequest{Newest: true, Limit: 2, Agent: "b"}, []string{ids[2], ids[4]}, true},
		{hub.AdminListRequest{Newest: true, Limit: 3, AfterID: ids[2]}, ids[3:], false},
	} {
		msgs, cursor, more, err := h.AdminList(ctx, c.req)
		if err != nil {
			t.Fatal(err)
		}
		got := idsOf(msgs)
		if strings.Join(got, ",") != strings.Join(c.want, ",") || more != c.more || hub.FormatMessageID(cursor) != c.want[len(c.want)-1] {
			t.Errorf("%+v: got %v more=%v cursor=%d, want %v more=%v cursor=%s", c.req, got, more, cursor, c.want, c.more, c.want[len(c.want)-1])
		}
	}
	msgs, _, _, err := h.AdminList(ctx, hub.AdminListRequest{AfterID: ids[4], Limit: 10})
	if err != nil || len(msgs) != 0 {
		t.Errorf("after the newest: %v %v, want nothing", idsOf(msgs), err)
	}
}
