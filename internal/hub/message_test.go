package hub_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestParseMentions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want []string
	}{
		{"no mentions", nil},
		{"@bob look", []string{"bob"}},
		{"hey @bob and @carol, and @bob again", []string{"bob", "carol"}},
		{"ask @bob.", []string{"bob"}},
		{"ask @bob.smith please", []string{"bob.smith"}},
		{"(@bob) [@carol] @dave: x", []string{"bob", "carol", "dave"}},
		{"@bob,@carol", []string{"bob", "carol"}},
		{"line\n@bob", []string{"bob"}},
		{"mail bob@example.com or carol.x@corp.io", nil},
		{"@@bob", nil},
		{"@Bob is not a name", nil},
		{"@ bob", nil},
		{"email@bob", nil},
	}
	for _, tt := range tests {
		if got := hub.ParseMentions(tt.body); !slices.Equal(got, tt.want) {
			t.Errorf("ParseMentions(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestParseMessageID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"", 0, true},
		{"0", 0, true},
		{"42", 42, true},
		{"9223372036854775807", 1<<63 - 1, true},
		{"9223372036854775808", 0, false},
		{"-1", 0, false},
		{"abc", 0, false},
		{"1.5", 0, false},
		{" 1", 0, false},
		{"0x10", 0, false},
	}
	for _, tt := range tests {
		got, err := hub.ParseMessageID("after_id", tt.in)
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("ParseMessageID(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if !tt.ok {
			if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(err.Error(), "after_id") {
				t.Errorf("ParseMessageID(%q) error = %v, want EINVALID naming after_id", tt.in, err)
			}
		}
	}
	if got := hub.FormatMessageID(0); got != "" {
		t.Errorf("FormatMessageID(0) = %q, want \"\"", got)
	}
	if got := hub.FormatMessageID(42); got != "42" {
		t.Errorf("FormatMessageID(42) = %q, want 42", got)
	}
}

func TestPostDirect(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	as := h.agents(t, "alice", "bob", "carol")
	alice, bob, carol := as[0], as[1], as[2]

	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "hello"})
	if m.ID == 0 || m.From != "alice" || !slices.Equal(m.To, []string{"bob"}) || m.Body != "hello" ||
		m.Kind != hub.KindMessage || !m.CreatedAt.Equal(coreT0) || m.Channel != "" || len(m.Mentions) != 0 {
		t.Errorf("posted = %+v", m)
	}
	got := h.inbox(t, bob)
	if len(got) != 1 || got[0].ID != m.ID || !got[0].Unread || got[0].MentionsYou || got[0].From != "alice" {
		t.Errorf("bob's inbox = %+v, want the message, unread", got)
	}
	if n := len(h.inbox(t, alice)); n != 0 {
		t.Errorf("alice's inbox has %d messages, want 0 (the sender is not a recipient)", n)
	}
	if n := len(h.inbox(t, carol)); n != 0 {
		t.Errorf("carol's inbox has %d messages, want 0", n)
	}

	// The sender is the authenticated agent, whatever name is passed.
	m2, err := h.Post(context.Background(), alice, hub.SenderAdmin, hub.PostRequest{To: []string{"bob"}, Body: "hi"})
	if err != nil || m2.From != "alice" {
		t.Errorf("Post as alice with from=admin: From %q (%v), want alice", m2.From, err)
	}

	// Several recipients, duplicates folded.
	m3 := h.post(t, alice, hub.PostRequest{To: []string{"bob", "carol", "bob"}, Body: "both"})
	if !slices.Equal(m3.To, []string{"bob", "carol"}) {
		t.Errorf("To = %v, want [bob carol]", m3.To)
	}
	for _, a := range []*hub.Agent{bob, carol} {
		if !containsID(h.inbox(t, a), m3.ID) {
			t.Errorf("%s did not receive the message to several agents", a.Name)
		}
	}

	// System senders.
	sys, err := h.Post(context.Background(), nil, hub.SenderOrchestrator, hub.PostRequest{To: []string{"bob"}, Body: "@bob no activity", Kind: hub.KindNudge})
	if err != nil {
		t.Fatalf("system post: %v", err)
	}
	if sys.From != "orchestrator" || sys.Kind != hub.KindNudge || !slices.Equal(sys.Mentions, []string{"bob"}) {
		t.Errorf("system post = %+v", sys)
	}
}

func TestPostChannel(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol", "dave")
	alice, bob, carol, dave := as[0], as[1], as[2], as[3]
	for _, a := range []*hub.Agent{bob, carol} {
		if _, err := h.JoinChannel(ctx, a, "#ops"); err != nil {
			t.Fatalf("JoinChannel: %v", err)
		}
	}
	m := h.post(t, alice, hub.PostRequest{Channel: "#ops", Body: "deploying"})
	if m.Channel != "#ops" || len(m.To) != 0 {
		t.Errorf("channel post = %+v", m)
	}
	for _, tt := range []struct {
		a    *hub.Agent
		want bool
	}{{alice, false}, {bob, true}, {carol, true}, {dave, false}} {
		if got := containsID(h.inbox(t, tt.a), m.ID); got != tt.want {
			t.Errorf("%s received the channel post: %v, want %v", tt.a.Name, got, tt.want)
		}
	}
	// Posting joined alice: she receives the next post to the channel.
	m2 := h.post(t, carol, hub.PostRequest{Channel: "#ops", Body: "ok"})
	if !containsID(h.inbox(t, alice), m2.ID) {
		t.Error("alice did not receive a post to the channel she posted to")
	}
	if containsID(h.inbox(t, carol), m2.ID) {
		t.Error("carol received her own channel post")
	}
	members, err := h.JoinChannel(ctx, dave, "#ops")
	if err != nil || !slices.Equal(members, []string{"alice", "bob", "carol", "dave"}) {
		t.Errorf("JoinChannel members = %v, %v", members, err)
	}
	if err := h.LeaveChannel(ctx, bob, "#ops"); err != nil {
		t.Fatalf("LeaveChannel: %v", err)
	}
	m3 := h.post(t, alice, hub.PostRequest{Channel: "#ops", To: []string{"dave"}, Body: "x"})
	if containsID(h.inbox(t, bob), m3.ID) {
		t.Error("bob received a post after leaving the channel")
	}
	if ms := h.inbox(t, dave); !containsID(ms, m3.ID) || len(ms) != 1 {
		t.Errorf("dave, both a direct recipient and a member, got %v, want the message once", msgIDs(ms))
	}
	// A disabled member is skipped.
	if _, err := h.SetAgentDisabled(ctx, "carol", true); err != nil {
		t.Fatal(err)
	}
	m4 := h.post(t, alice, hub.PostRequest{Channel: "#ops", Body: "y"})
	if containsID(h.inbox(t, carol), m4.ID) {
		t.Error("disabled carol received a channel post")
	}
	// The admin posts to a channel without joining it.
	adm, err := h.Post(ctx, nil, hub.SenderAdmin, hub.PostRequest{Channel: "#ops", Body: "maintenance"})
	if err != nil || adm.From != "admin" {
		t.Fatalf("admin post = %+v, %v", adm, err)
	}
	if !containsID(h.inbox(t, dave), adm.ID) || !containsID(h.inbox(t, alice), adm.ID) {
		t.Error("members did not receive the admin's channel post")
	}

	err = h.LeaveChannel(ctx, bob, "#nope")
	wantCode(t, "LeaveChannel(#nope)", err, hub.ENOTFOUND)
	_, err = h.JoinChannel(ctx, bob, "ops")
	wantCode(t, "JoinChannel(ops)", err, hub.EINVALID)
}

func TestPostMentions(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	as := h.agents(t, "alice", "bob", "carol", "dave")
	alice, bob, carol, dave := as[0], as[1], as[2], as[3]

	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "@bob and @carol: see dave@example.com, cc @nobody"})
	if !slices.Equal(m.Mentions, []string{"bob", "carol"}) {
		t.Errorf("Mentions = %v, want [bob carol] (not dave from an e-mail address, not the unknown nobody)", m.Mentions)
	}
	check := func(a *hub.Agent, id int64, want, mention bool) {
		t.Helper()
		for _, got := range h.inbox(t, a) {
			if got.ID == id {
				if !want {
					t.Errorf("%s received message %d, want not", a.Name, id)
				} else if got.MentionsYou != mention {
					t.Errorf("%s: MentionsYou = %v, want %v", a.Name, got.MentionsYou, mention)
				}
				return
			}
		}
		if want {
			t.Errorf("%s did not receive message %d", a.Name, id)
		}
	}
	check(bob, m.ID, true, true)
	check(carol, m.ID, true, true) // a mention delivers
	check(dave, m.ID, false, false)

	// Explicit mentions.
	m2 := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "fyi", Mentions: []string{"dave"}})
	if !slices.Equal(m2.Mentions, []string{"dave"}) {
		t.Errorf("Mentions = %v, want [dave]", m2.Mentions)
	}
	check(dave, m2.ID, true, true)
	check(bob, m2.ID, true, false)

	before := h.maxMessageID(t)
	_, err := h.Post(context.Background(), alice, "", hub.PostRequest{To: []string{"bob"}, Body: "x", Mentions: []string{"nobody"}})
	wantCode(t, "explicit mention of an unknown agent", err, hub.ENOTFOUND)
	_, err = h.Post(context.Background(), alice, "", hub.PostRequest{To: []string{"bob"}, Body: "x", Mentions: []string{"No Body"}})
	wantCode(t, "explicit mention of an invalid name", err, hub.EINVALID)
	if got := h.maxMessageID(t); got != before {
		t.Errorf("MaxMessageID = %d after refused posts, want %d", got, before)
	}

	// Mentioning oneself is text: the sender does not receive its own
	// message, neither in a direct post nor in a channel.
	self := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "@alice will do it, @bob"})
	check(alice, self.ID, false, false)
	check(bob, self.ID, true, true)
	selfCh := h.post(t, alice, hub.PostRequest{Channel: "#team", Body: "note to @alice"})
	check(alice, selfCh.ID, false, false)

	// Unread mention counts.
	st, err := h.Status(context.Background(), bob)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unread != 3 || st.Mentions != 2 {
		t.Errorf("bob's status: unread %d mentions %d, want 3 and 2", st.Unread, st.Mentions)
	}
}

// Every refused post says why and writes nothing.
func TestPostRefused(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.MaxBodyBytes = 100; c.MaxFanout = 3 })
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol", "dave", "erin", "off")
	alice := as[0]
	if _, err := h.SetAgentDisabled(ctx, "off", true); err != nil {
		t.Fatal(err)
	}
	for _, a := range as[1:5] {
		if _, err := h.JoinChannel(ctx, a, "#big"); err != nil {
			t.Fatal(err)
		}
	}
	first := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "first"})

	tests := []struct {
		name string
		req  hub.PostRequest
		want string
		text string // part of the message
	}{
		{"empty body", hub.PostRequest{To: []string{"bob"}}, hub.EINVALID, "body is empty"},
		{"blank body", hub.PostRequest{To: []string{"bob"}, Body: " \n\t"}, hub.EINVALID, "body is empty"},
		{"invalid UTF-8", hub.PostRequest{To: []string{"bob"}, Body: "a\xffb"}, hub.EINVALID, "UTF-8"},
		{"oversize body", hub.PostRequest{To: []string{"bob"}, Body: strings.Repeat("x", 101)}, hub.EINVALID, "limit is 100"},
		{"no recipient", hub.PostRequest{Body: "x"}, hub.EINVALID, "no recipient"},
		{"bad recipient name", hub.PostRequest{To: []string{"Bob"}, Body: "x"}, hub.EINVALID, "agent name"},
		{"unknown recipient", hub.PostRequest{To: []string{"bob", "ghost"}, Body: "x"}, hub.ENOTFOUND, `"ghost"`},
		{"disabled recipient", hub.PostRequest{To: []string{"bob", "off"}, Body: "x"}, hub.EPRECONDITION, "disabled"},
		{"channel without #", hub.PostRequest{Channel: "ops", Body: "x"}, hub.EINVALID, "channel"},
		{"channel only #", hub.PostRequest{Channel: "#", Body: "x"}, hub.EINVALID, "channel"},
		{"channel upper case", hub.PostRequest{Channel: "#Ops", Body: "x"}, hub.EINVALID, "channel"},
		{"channel with space", hub.PostRequest{Channel: "#o ps", Body: "x"}, hub.EINVALID, "channel"},
		{"channel too long", hub.PostRequest{Channel: "#" + strings.Repeat("c", 64), Body: "x"}, hub.EINVALID, "channel"},
		{"reply_to unknown", hub.PostRequest{To: []string{"bob"}, Body: "x", ReplyTo: "999"}, hub.ENOTFOUND, "reply_to"},
		{"reply_to malformed", hub.PostRequest{To: []string{"bob"}, Body: "x", ReplyTo: "abc"}, hub.EINVALID, "reply_to"},
		{"too many recipients", hub.PostRequest{To: []string{"bob", "carol", "dave", "erin"}, Body: "x"}, hub.EEXHAUSTED, "limit is 3"},
		{"channel too big", hub.PostRequest{Channel: "#big", Body: "x"}, hub.EEXHAUSTED, "limit is 3"},
		{"mentions push past the limit", hub.PostRequest{To: []string{"bob", "carol"}, Body: "@dave @erin"}, hub.EEXHAUSTED, "limit is 3"},
	}
	for _, tt := range tests {
		_, err := h.Post(ctx, alice, "", tt.req)
		wantCode(t, tt.name, err, tt.want)
		if err != nil && !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%s: message %q, want it to contain %q", tt.name, err, tt.text)
		}
	}
	if got := h.maxMessageID(t); got != first.ID {
		t.Errorf("MaxMessageID = %d after refused posts, want %d", got, first.ID)
	}
	if err := h.DB.View(ctx, func(tx hub.Tx) error {
		_, err := tx.ChannelByName(hub.DefaultProject, "#ops")
		wantCode(t, "channel of a refused post", err, hub.ENOTFOUND)
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// At the limits.
	h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: strings.Repeat("é", 50)}) // 100 bytes
	h.post(t, alice, hub.PostRequest{To: []string{"bob", "carol", "dave"}, Body: "three"})
	reply := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "re", ReplyTo: fmt.Sprint(first.ID)})
	if reply.ReplyTo != first.ID {
		t.Errorf("ReplyTo = %d, want %d", reply.ReplyTo, first.ID)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.MaxListLimit = 4 })
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	var ids []int64
	for i := range 6 {
		req := hub.PostRequest{To: []string{"bob"}, Body: fmt.Sprint("m", i)}
		if i == 4 {
			req = hub.PostRequest{Channel: "#ops", To: []string{"bob"}, Body: "on ops"}
		}
		ids = append(ids, h.post(t, alice, req).ID)
	}
	fmtID := func(i int) string { return fmt.Sprint(ids[i]) }

	tests := []struct {
		name       string
		req        hub.ListRequest
		want       []int64
		wantCursor int64
		wantMore   bool
	}{
		{"first page", hub.ListRequest{Limit: 2}, ids[0:2], ids[1], true},
		{"next page", hub.ListRequest{AfterID: fmtID(1), Limit: 2}, ids[2:4], ids[3], true},
		{"last page", hub.ListRequest{AfterID: fmtID(3), Limit: 2}, ids[4:6], ids[5], false},
		{"exact fit", hub.ListRequest{AfterID: fmtID(1), Limit: 4}, ids[2:6], ids[5], false},
		{"past the end", hub.ListRequest{AfterID: fmtID(5)}, nil, ids[5], false},
		{"limit clamped", hub.ListRequest{Limit: 1000}, ids[0:4], ids[3], true},
		{"default limit", hub.ListRequest{}, ids[0:4], ids[3], true}, // default 50, clamped to the maximum 4
		{"channel", hub.ListRequest{Channel: "#ops"}, ids[4:5], ids[4], false},
	}
	for _, tt := range tests {
		ms, cursor, more, err := h.List(ctx, bob, tt.req)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := msgIDs(ms); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("%s: IDs %v, want %v", tt.name, got, tt.want)
		}
		if cursor != tt.wantCursor || more != tt.wantMore {
			t.Errorf("%s: cursor %d more %v, want %d %v", tt.name, cursor, more, tt.wantCursor, tt.wantMore)
		}
	}

	// unread_only starts after the read cursor (or after_id, if later).
	if _, _, err := h.MarkRead(ctx, bob, fmtID(2)); err != nil {
		t.Fatal(err)
	}
	ms, _, _, err := h.List(ctx, bob, hub.ListRequest{UnreadOnly: true})
	if got := msgIDs(ms); err != nil || !slices.Equal(got, ids[3:6]) {
		t.Errorf("unread only: %v, %v; want %v", got, err, ids[3:6])
	}
	for _, m := range ms {
		if !m.Unread {
			t.Errorf("message %d listed as unread has Unread false", m.ID)
		}
	}
	ms, _, _, _ = h.List(ctx, bob, hub.ListRequest{UnreadOnly: true, AfterID: fmtID(4)})
	if got := msgIDs(ms); !slices.Equal(got, ids[5:6]) {
		t.Errorf("unread only after %d: %v, want %v", ids[4], got, ids[5:6])
	}
	ms, _, _, _ = h.List(ctx, bob, hub.ListRequest{})
	if len(ms) == 0 || ms[0].Unread {
		t.Errorf("a read message listed: %+v, want Unread false", ms[0])
	}

	for _, tt := range []struct {
		name string
		req  hub.ListRequest
	}{
		{"malformed cursor", hub.ListRequest{AfterID: "abc"}},
		{"negative cursor", hub.ListRequest{AfterID: "-5"}},
		{"negative limit", hub.ListRequest{Limit: -1}},
		{"bad channel", hub.ListRequest{Channel: "ops"}},
	} {
		_, _, _, err := h.List(ctx, bob, tt.req)
		wantCode(t, tt.name, err, hub.EINVALID)
	}

	// The admin view.
	all, cursor, more, err := h.AdminList(ctx, hub.AdminListRequest{Agent: "bob", Limit: 3})
	if got := msgIDs(all); err != nil || !slices.Equal(got, ids[:3]) || cursor != ids[2] || !more {
		t.Errorf("AdminList(bob) = %v %d %v %v, want %v", got, cursor, more, err, ids[:3])
	}
	all, _, _, _ = h.AdminList(ctx, hub.AdminListRequest{Channel: "#ops"})
	if got := msgIDs(all); !slices.Equal(got, ids[4:5]) {
		t.Errorf("AdminList(#ops) = %v, want %v", got, ids[4:5])
	}
	_, _, _, err = h.AdminList(ctx, hub.AdminListRequest{Agent: "ghost"})
	wantCode(t, "AdminList(ghost)", err, hub.ENOTFOUND)
	_, _, _, err = h.AdminList(ctx, hub.AdminListRequest{AfterID: "x"})
	wantCode(t, "AdminList(after x)", err, hub.EINVALID)
}

func TestMarkRead(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol")
	alice, bob := as[0], as[1]
	var ids []int64
	for i := range 4 {
		body := "plain"
		if i%2 == 0 {
			body = "@bob look"
		}
		ids = append(ids, h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: body}).ID)
	}
	h.post(t, alice, hub.PostRequest{To: []string{"carol"}, Body: "not for bob"})

	status := func() (int64, int64) {
		t.Helper()
		st, err := h.Status(ctx, bob)
		if err != nil {
			t.Fatal(err)
		}
		return st.Unread, st.Mentions
	}
	if u, m := status(); u != 4 || m != 2 {
		t.Errorf("before MarkRead: unread %d mentions %d, want 4 and 2", u, m)
	}

	steps := []struct {
		upTo       string
		wantUnread int64
		wantCursor int64
	}{
		{fmt.Sprint(ids[1]), 2, ids[1]},
		{fmt.Sprint(ids[0]), 2, ids[1]}, // never moves back
		{"0", 2, ids[1]},
		{"", 0, ids[3]}, // everything
	}
	for _, s := range steps {
		unread, cursor, err := h.MarkRead(ctx, bob, s.upTo)
		if err != nil || unread != s.wantUnread || cursor != s.wantCursor {
			t.Errorf("MarkRead(%q) = %d, %d, %v; want %d, %d", s.upTo, unread, cursor, err, s.wantUnread, s.wantCursor)
		}
	}
	if u, m := status(); u != 0 || m != 0 {
		t.Errorf("after MarkRead all: unread %d mentions %d, want 0 and 0", u, m)
	}
	_, _, err := h.MarkRead(ctx, bob, "abc")
	wantCode(t, "MarkRead(abc)", err, hub.EINVALID)

	// Marking beyond what was delivered must not swallow later messages.
	if _, cursor, err := h.MarkRead(ctx, bob, "1000000"); err != nil || cursor > h.maxMessageID(t) {
		t.Errorf("MarkRead(1000000) cursor = %d, %v; want at most the newest message %d", cursor, err, h.maxMessageID(t))
	}
	later := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "later"})
	if u, _ := status(); u != 1 {
		t.Errorf("unread after a new message = %d, want 1", u)
	}
	ms, _, _, _ := h.List(ctx, bob, hub.ListRequest{UnreadOnly: true})
	if got := msgIDs(ms); !slices.Equal(got, []int64{later.ID}) {
		t.Errorf("unread messages = %v, want [%d]", got, later.ID)
	}
}

func TestStatusAndHeartbeat(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "@bob hi"})

	h.Clock.Advance(90 * time.Second)
	r, err := h.Heartbeat(ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if r.HeartbeatID != "20260102030535" || r.Unread != 1 || r.Mentions != 1 || !r.StartedAt.Equal(coreT0.Add(90*time.Second)) {
		t.Errorf("Heartbeat = %+v, want ID 20260102030535, 1 unread, 1 mention", r)
	}
	st, err := h.Status(ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if st.Agent != "bob" || st.CurrentHeartbeatID != r.HeartbeatID || st.Unread != 1 || st.Mentions != 1 ||
		st.LatestMessageID != m.ID || !st.Time.Equal(h.Clock.Now()) {
		t.Errorf("Status = %+v", st)
	}
	if !slices.Contains(st.Online, "alice") || !slices.Contains(st.Online, "bob") {
		t.Errorf("Online = %v, want alice and bob", st.Online)
	}
}
