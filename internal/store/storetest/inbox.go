package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func testInboxItems(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	q := &hub.InboxItem{Kind: hub.KindQuestion, AgentID: ann.ID, Project: hub.DefaultProject, Title: "Which DB?", Body: "Which DB?\nPostgres or SQLite",
		Options: []string{"Postgres", "SQLite"}, Urgency: hub.UrgencyUrgent, State: hub.ItemOpen, CreatedAt: t0}
	ap := &hub.InboxItem{Kind: hub.KindApproval, AgentID: bob.ID, Project: hub.DefaultProject, Title: "Allow Bash(npm test)?", Body: `{"command":"npm test"}`,
		Tool: "Bash", Urgency: hub.UrgencyNormal, State: hub.ItemOpen, CallKey: "k1", SuggestedRule: "npm test:*", CreatedAt: t0.Add(time.Second)}
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.InsertInboxItem(q); err != nil {
			return err
		}
		return tx.InsertInboxItem(ap)
	})
	mustView(t, db, func(tx hub.Tx) error {
		got, err := tx.InboxItemByID(q.ID)
		if err != nil {
			return err
		}
		if got.AgentName != "ann" || fmt.Sprint(got.Options) != "[Postgres SQLite]" || got.Urgency != hub.UrgencyUrgent || got.Body != q.Body || !got.CreatedAt.Equal(t0) {
			t.Errorf("item read back = %+v, want %+v with agent ann", got, q)
		}
		if _, err := tx.InboxItemByID(9999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("unknown item: %v, want ENOTFOUND", err)
		}
		open, err := tx.OpenItemOf(bob.ID, hub.KindApproval)
		if err != nil || open.ID != ap.ID {
			t.Errorf("OpenItemOf(bob, approval) = %v, %v; want item %d", open, err, ap.ID)
		}
		if _, err := tx.OpenItemOf(ann.ID, hub.KindApproval); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("OpenItemOf(ann, approval): %v, want ENOTFOUND", err)
		}
		items, err := tx.InboxItemsByID([]int64{ap.ID, q.ID, 9999})
		if err != nil || len(items) != 2 {
			t.Errorf("InboxItemsByID = %d items, %v; want 2", len(items), err)
		}
		list, err := tx.ListInboxItems(hub.ItemQuery{AgentID: bob.ID})
		if err != nil || len(list) != 1 || list[0].ID != ap.ID || list[0].SuggestedRule != "npm test:*" {
			t.Errorf("ListInboxItems(bob) = %v, %v", list, err)
		}
		// Urgent first, then oldest, from a position; the approvals before a time.
		byUrgency, err := tx.ListInboxItems(hub.ItemQuery{State: hub.ItemOpen, ByUrgency: true})
		if err != nil || len(byUrgency) != 2 || byUrgency[0].ID != q.ID {
			t.Errorf("ListInboxItems(by urgency) = %v, %v; want the urgent question first", byUrgency, err)
		}
		after, err := tx.ListInboxItems(hub.ItemQuery{State: hub.ItemOpen, ByUrgency: true, AfterRank: 0, AfterID: q.ID})
		if err != nil || len(after) != 1 || after[0].ID != ap.ID {
			t.Errorf("ListInboxItems(after the urgent one) = %v, %v; want the approval", after, err)
		}
		for projects, want := range map[string]int{"default": 2, "red": 0, "red,default": 2} {
			got, err := tx.ListInboxItems(hub.ItemQuery{Projects: strings.Split(projects, ",")})
			if err != nil || len(got) != want {
				t.Errorf("ListInboxItems(projects %s) = %d items, %v; want %d", projects, len(got), err, want)
			}
		}
		old, err := tx.ListInboxItems(hub.ItemQuery{State: hub.ItemOpen, Kind: hub.KindApproval, Before: t0.Add(time.Second)})
		if err != nil || len(old) != 0 {
			t.Errorf("ListInboxItems(approvals before its creation) = %v, %v; want none", old, err)
		}
		agent, project, err := tx.CountOpenItems(ann.ID, hub.DefaultProject)
		if err != nil || agent != 1 || project != 2 {
			t.Errorf("CountOpenItems(ann) = %d, %d, %v; want 1, 2", agent, project, err)
		}
		return nil
	})
	// Two answers race: exactly one wins.
	var wins, mu = 0, sync.Mutex{}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mustUpdate(t, db, func(tx hub.Tx) error {
				ok, err := tx.CloseInboxItem(ap.ID, hub.ItemAnswered, hub.ItemClose{At: t0.Add(time.Minute), By: fmt.Sprintf("p%d", i), Decision: hub.DecisionAllow})
				if ok {
					mu.Lock()
					wins++
					mu.Unlock()
				}
				return err
			})
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d answers won the race for one item, want 1", wins)
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		if ok, err := tx.CloseInboxItem(q.ID, hub.ItemExpired, hub.ItemClose{At: t0.Add(time.Minute)}); !ok || err != nil {
			return fmt.Errorf("expire the question: %v %v", ok, err)
		}
		// Only an expired approval with that call key is marked ran.
		if ok, err := tx.MarkItemRan(bob.ID, "k1", t0); ok || err != nil {
			return fmt.Errorf("marked an answered approval ran: %v %v", ok, err)
		}
		exp := &hub.InboxItem{Kind: hub.KindApproval, AgentID: bob.ID, Project: hub.DefaultProject, Title: "Allow Edit?", Tool: "Edit", Urgency: hub.UrgencyNormal, State: hub.ItemExpired, CallKey: "k2", CreatedAt: t0}
		if err := tx.InsertInboxItem(exp); err != nil {
			return err
		}
		if ok, err := tx.MarkItemRan(bob.ID, "k2", t0.Add(time.Hour)); !ok || err != nil {
			return fmt.Errorf("expired approval not marked ran: %v %v", ok, err)
		}
		if ok, err := tx.MarkItemRan(bob.ID, "k2", t0.Add(2*time.Hour)); ok || err != nil {
			return fmt.Errorf("marked ran twice: %v %v", ok, err)
		}
		return nil
	})
	mustView(t, db, func(tx hub.Tx) error {
		got, err := tx.InboxItemByID(ap.ID)
		if err != nil {
			return err
		}
		if got.State != hub.ItemAnswered || got.Decision != hub.DecisionAllow || got.AnsweredBy == "" || !got.AnsweredAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("answered item = %+v", got)
		}
		open, err := tx.ListInboxItems(hub.ItemQuery{State: hub.ItemOpen})
		if err != nil || len(open) != 0 {
			t.Errorf("open items = %v, %v; want none", open, err)
		}
		ran, err := tx.ListInboxItems(hub.ItemQuery{AgentID: bob.ID, State: hub.ItemExpired, CallKey: "k2"})
		if err != nil || len(ran) != 1 || !ran[0].RanAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("the call that ran = %v, %v; want ran at t0+1h", ran, err)
		}
		return nil
	})
}

func testApprovalRules(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ann := createAgent(t, db, "ann")
	mine := &hub.ApprovalRule{Project: hub.DefaultProject, AgentID: ann.ID, Tool: "Bash", Covers: hub.CoversRule, Pattern: "npm test:*", CreatedBy: "alice", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), ItemID: 3}
	all := &hub.ApprovalRule{Project: hub.DefaultProject, Tool: "Bash", CreatedBy: "operator", CreatedAt: t0, ExpiresAt: t0.Add(2 * time.Hour)}
	other := &hub.ApprovalRule{Project: "red", Tool: "Bash", CreatedBy: "operator", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	mustUpdate(t, db, func(tx hub.Tx) error {
		for _, r := range []*hub.ApprovalRule{mine, all, other} {
			if err := tx.InsertApprovalRule(r); err != nil {
				return err
			}
		}
		return nil
	})
	rules := func(at time.Time) []*hub.ApprovalRule {
		var rs []*hub.ApprovalRule
		mustView(t, db, func(tx hub.Tx) (err error) {
			rs, err = tx.ApprovalRulesFor(hub.DefaultProject, "Bash", at)
			return err
		})
		return rs
	}
	if rs := rules(t0); len(rs) != 2 {
		t.Fatalf("rules for default/Bash at t0 = %d, want 2", len(rs))
	}
	if rs := rules(t0.Add(90 * time.Minute)); len(rs) != 1 || rs[0].AgentID != 0 {
		t.Errorf("rules after the agent's expired = %+v, want the project's", rs)
	}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.RevokeApprovalRule(all.ID, t0.Add(time.Minute)) })
	if err := db.Update(t.Context(), func(tx hub.Tx) error { return tx.RevokeApprovalRule(999, t0) }); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("revoke an unknown rule: %v, want ENOTFOUND", err)
	}
	if rs := rules(t0.Add(2 * time.Minute)); len(rs) != 1 || rs[0].ID != mine.ID || rs[0].AgentName != "ann" || rs[0].ItemID != 3 || rs[0].Covers != hub.CoversRule || rs[0].Pattern != "npm test:*" {
		t.Errorf("rules after revoking the project's = %+v, want ann's", rs)
	}
	mustView(t, db, func(tx hub.Tx) error {
		live, err := tx.ApprovalRules(t0.Add(2*time.Minute), false)
		if err != nil || len(live) != 2 {
			t.Errorf("live rules = %d, %v; want 2", len(live), err)
		}
		if r, err := tx.ApprovalRuleByID(mine.ID); err != nil || r.AgentName != "ann" || r.Project != hub.DefaultProject {
			t.Errorf("ApprovalRuleByID = %+v, %v; want ann's", r, err)
		}
		if _, err := tx.ApprovalRuleByID(999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("ApprovalRuleByID(999): %v, want ENOTFOUND", err)
		}
		every, err := tx.ApprovalRules(t0, true)
		if err != nil || len(every) != 3 || every[1].RevokedAt.IsZero() {
			t.Errorf("all rules = %d, %v; want 3 with the revoked one", len(every), err)
		}
		return nil
	})
}

func testPeople(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	p := &hub.Person{Name: "alice", CreatedAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertPerson(p, hub.HashToken("tok-a")) })
	scoped := &hub.Person{Name: "pat", CreatedAt: t0, Projects: []string{"api", "web"}}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertPerson(scoped, hub.HashToken("tok-p")) })
	if err := db.Update(t.Context(), func(tx hub.Tx) error {
		return tx.InsertPerson(&hub.Person{Name: "alice", CreatedAt: t0}, hub.HashToken("tok-b"))
	}); hub.ErrorCode(err) != hub.ECONFLICT {
		t.Errorf("second alice: %v, want ECONFLICT", err)
	}
	mustView(t, db, func(tx hub.Tx) error {
		got, err := tx.PersonByTokenHash(hub.HashToken("tok-a"))
		if err != nil || got.Name != "alice" || got.ID != p.ID || got.Projects != nil {
			t.Errorf("by token = %+v, %v", got, err)
		}
		if got, err := tx.PersonByName("pat"); err != nil || fmt.Sprint(got.Projects) != "[api web]" {
			t.Errorf("pat = %+v, %v; want the projects [api web]", got, err)
		}
		return nil
	})
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.RevokePerson("alice", t0.Add(time.Minute)) })
	mustView(t, db, func(tx hub.Tx) error {
		if _, err := tx.PersonByTokenHash(hub.HashToken("tok-a")); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("revoked token still found: %v", err)
		}
		got, err := tx.PersonByName("alice")
		if err != nil || !got.RevokedAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("revoked person = %+v, %v", got, err)
		}
		ps, err := tx.People()
		if err != nil || len(ps) != 2 {
			t.Errorf("people = %v, %v", ps, err)
		}
		return nil
	})
	if err := db.Update(t.Context(), func(tx hub.Tx) error { return tx.RevokePerson("nobody", t0) }); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("revoke nobody: %v, want ENOTFOUND", err)
	}
}

func testWebhooks(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	w := &hub.Webhook{URL: "http://127.0.0.1:9/hook", Kinds: []hub.ItemKind{hub.KindApproval, hub.KindQuestion}, Projects: []string{"red"}, Secret: "0123456789abcdef", CreatedAt: t0}
	v := &hub.Webhook{URL: "http://127.0.0.1:9/all", Secret: "fedcba9876543210", CreatedAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.InsertWebhook(w); err != nil {
			return err
		}
		return tx.InsertWebhook(v)
	})
	mustUpdate(t, db, func(tx hub.Tx) error {
		for i := range 5 {
			d := &hub.WebhookDelivery{WebhookID: w.ID, ItemID: int64(i + 1), Status: hub.DeliveryDelivered, Attempts: 1, Code: 200, CreatedAt: t0, DoneAt: t0}
			if err := tx.InsertWebhookDelivery(d, 3); err != nil {
				return err
			}
		}
		return tx.InsertWebhookDelivery(&hub.WebhookDelivery{WebhookID: v.ID, ItemID: 9, Status: hub.DeliveryFailed, Attempts: 4, Code: 500, Error: "500 Internal Server Error", CreatedAt: t0, DoneAt: t0}, 3)
	})
	mustView(t, db, func(tx hub.Tx) error {
		ws, err := tx.Webhooks()
		if err != nil || len(ws) != 2 || fmt.Sprint(ws[0].Kinds) != "[approval question]" || fmt.Sprint(ws[0].Projects) != "[red]" || ws[0].Secret != w.Secret || len(ws[1].Kinds) != 0 {
			t.Errorf("webhooks = %+v, %v", ws, err)
		}
		ds, err := tx.WebhookDeliveries(w.ID, 10)
		if err != nil || len(ds) != 3 || ds[0].ItemID != 5 {
			t.Errorf("w's log = %+v, %v; want the newest 3 (items 5, 4, 3)", ds, err)
		}
		all, err := tx.WebhookDeliveries(0, 10)
		if err != nil || len(all) != 4 || all[0].Error == "" {
			t.Errorf("the whole log = %+v, %v; want 4 entries", all, err)
		}
		return nil
	})
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.DeleteWebhook(w.ID) })
	if err := db.Update(t.Context(), func(tx hub.Tx) error { return tx.DeleteWebhook(w.ID) }); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("delete twice: %v, want ENOTFOUND", err)
	}
	mustView(t, db, func(tx hub.Tx) error {
		ds, err := tx.WebhookDeliveries(0, 10)
		if err != nil || len(ds) != 1 {
			t.Errorf("log after deleting w = %d entries, %v; want v's 1", len(ds), err)
		}
		return nil
	})
}
