package hub_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestMatchRule(t *testing.T) {
	t.Parallel()
	now := coreT0
	rule := func(id, agent int64, project, tool string, expires time.Duration, revoked bool) *hub.ApprovalRule {
		r := &hub.ApprovalRule{ID: id, AgentID: agent, Project: project, Tool: tool, Covers: hub.CoversTool, ExpiresAt: now.Add(expires)}
		if revoked {
			r.RevokedAt = now.Add(-time.Minute)
		}
		return r
	}
	mine := rule(1, 7, "default", "Bash", time.Hour, false)
	project := rule(2, 0, "default", "Bash", time.Hour, false)
	newerProject := rule(3, 0, "default", "Bash", time.Hour, false)
	for _, c := range []struct {
		name  string
		rules []*hub.ApprovalRule
		agent int64
		want  int64 // 0: none
	}{
		{"none", nil, 7, 0},
		{"the agent's own", []*hub.ApprovalRule{mine}, 7, 1},
		{"another agent's does not count", []*hub.ApprovalRule{mine}, 8, 0},
		{"the project's covers every agent", []*hub.ApprovalRule{project}, 8, 2},
		{"the agent's before the project's", []*hub.ApprovalRule{project, mine}, 7, 1},
		{"the newest of equals", []*hub.ApprovalRule{project, newerProject}, 7, 3},
		{"expired", []*hub.ApprovalRule{rule(4, 7, "default", "Bash", 0, false)}, 7, 0},
		{"revoked", []*hub.ApprovalRule{rule(5, 7, "default", "Bash", time.Hour, true)}, 7, 0},
		{"another tool", []*hub.ApprovalRule{rule(6, 7, "default", "Edit", time.Hour, false)}, 7, 0},
		{"another project", []*hub.ApprovalRule{rule(8, 0, "red", "Bash", time.Hour, false)}, 7, 0},
	} {
		got := hub.MatchRule(c.rules, c.agent, "default", "Bash", `{"command":"ls"}`, now)
		var id int64
		if got != nil {
			id = got.ID
		}
		if id != c.want {
			t.Errorf("%s: rule %d, want %d", c.name, id, c.want)
		}
	}
}

func TestCheckAnswer(t *testing.T) {
	t.Parallel()
	approval := &hub.InboxItem{ID: 1, Kind: hub.KindApproval, State: hub.ItemOpen, Project: "default"}
	question := &hub.InboxItem{ID: 2, Kind: hub.KindQuestion, State: hub.ItemOpen}
	waiting := &hub.InboxItem{ID: 3, Kind: hub.KindNeedsInput, State: hub.ItemOpen}
	expired := &hub.InboxItem{ID: 4, Kind: hub.KindApproval, State: hub.ItemExpired}
	answered := &hub.InboxItem{ID: 5, Kind: hub.KindQuestion, State: hub.ItemAnswered, AnsweredBy: "pat"}
	for _, c := range []struct {
		name     string
		it       *hub.InboxItem
		a        hub.Answer
		code     string // "" for accepted
		says     string
		decision string
		text     string
	}{
		{"allow", approval, hub.Answer{Decision: "allow"}, "", "", "allow", ""},
		{"deny with a message", approval, hub.Answer{Decision: "deny", Message: "not now"}, "", "", "deny", "not now"},
		{"allow remembered for the project", approval, hub.Answer{Decision: "allow", Remember: "project"}, "", "", "allow", ""},
		{"a deny is never remembered", approval, hub.Answer{Decision: "deny", Remember: "agent"}, hub.EINVALID, "allow only", "", ""},
		{"no decision", approval, hub.Answer{}, hub.EINVALID, `"allow" or "deny"`, "", ""},
		{"a strange decision", approval, hub.Answer{Decision: "maybe"}, hub.EINVALID, `"maybe"`, "", ""},
		{"an approval answered in words", approval, hub.Answer{Text: "yes"}, hub.EINVALID, "is an approval", "", ""},
		{"a strange scope", approval, hub.Answer{Decision: "allow", Remember: "forever"}, hub.EINVALID, "not a scope", "", ""},
		{"a question's answer, trimmed", question, hub.Answer{Text: "  Postgres \n"}, "", "", "", "Postgres"},
		{"a question without an answer", question, hub.Answer{Text: "  "}, hub.EINVALID, "give the answer", "", ""},
		{"a question answered allow", question, hub.Answer{Decision: "allow"}, hub.EINVALID, "is a question", "", ""},
		{"needs input dismissed", waiting, hub.Answer{}, "", "", "", ""},
		{"too long", question, hub.Answer{Text: strings.Repeat("x", 9000)}, hub.EINVALID, "longer than", "", ""},
		{"expired", expired, hub.Answer{Decision: "allow"}, hub.EPRECONDITION, "is expired", "", ""},
		{"answered, by whom", answered, hub.Answer{Text: "x"}, hub.EPRECONDITION, "answered by pat", "", ""},
	} {
		d, text, err := hub.CheckAnswer(c.it, c.a)
		if c.code == "" {
			if err != nil || d != c.decision || text != c.text {
				t.Errorf("%s: %q %q %v, want %q %q accepted", c.name, d, text, err, c.decision, c.text)
			}
			continue
		}
		if hub.ErrorCode(err) != c.code || !strings.Contains(hub.ErrorMessage(err), c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, c.code, c.says)
		}
	}
}

// loopHub is a testHub with its inbox.
type loopHub struct {
	*testHub
	inbox *hub.Inbox
}

func newLoopHub(t *testing.T) *loopHub {
	t.Helper()
	h := newTestHub(t)
	return &loopHub{testHub: h, inbox: hub.NewInbox(h.Core, hub.InboxOptions{RuleTTL: time.Hour})}
}

// openItem waits for an open item of the agent and returns it.
func (h *loopHub) openItem(t *testing.T, kind hub.ItemKind) *hub.InboxItem {
	t.Helper()
	var it *hub.InboxItem
	waitFor(t, "an open "+string(kind), func() bool {
		items, _, err := h.inbox.ListItems(context.Background(), nil, "open", "", 0, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range items {
			if x.Kind == kind {
				it = x
				return true
			}
		}
		return false
	})
	return it
}

func TestApprovalAnsweredWakesTheRequestAndIsRemembered(t *testing.T) {
	t.Parallel()
	h := newLoopHub(t)
	ann, _ := h.agent(t, "ann")
	ctx := context.Background()
	type result struct {
		r   *hub.ApprovalResult
		err error
	}
	ask := func() chan result {
		c := make(chan result, 1)
		go func() {
			r, err := h.inbox.RequestApproval(ctx, ann, hub.ApprovalRequest{Tool: "Bash", Input: `{"command":"npm test"}`, CallKey: "k", Wait: 20 * time.Second})
			c <- result{r, err}
		}()
		return c
	}
	first := ask()
	it := h.openItem(t, hub.KindApproval)
	if it.Title != "Allow Bash(npm test)?" || it.AgentName != "ann" {
		t.Errorf("item = %+v", it)
	}
	start := time.Now()
	if _, err := h.inbox.AnswerItem(ctx, &hub.Person{Name: "pat"}, it.ID, hub.Answer{Decision: "allow", Remember: hub.RememberAgent}); err != nil {
		t.Fatal(err)
	}
	r := <-first
	if r.err != nil || r.r.TimedOut || r.r.Item.Decision != "allow" || r.r.Item.AnsweredBy != "pat" {
		t.Fatalf("request = %+v, %v; want allowed by pat", r.r, r.err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the parked request returned %v after the answer, want at once", d)
	}
	// A second answer to the same item is refused.
	_, err := h.inbox.AnswerItem(ctx, nil, it.ID, hub.Answer{Decision: "deny"})
	wantCode(t, "a second answer", err, hub.EPRECONDITION)
	// The rule answers at once, named in the item.
	r = <-ask()
	if r.err != nil || r.r.Item.Decision != "allow" || !strings.HasPrefix(r.r.Item.AnsweredBy, "rule ") {
		t.Fatalf("request under the rule = %+v, %v", r.r, r.err)
	}
	// The rule expires (fake clock): a person is asked again.
	h.Clock.Advance(2 * time.Hour)
	again := ask()
	open := h.openItem(t, hub.KindApproval)
	if _, err := h.inbox.AnswerItem(ctx, nil, open.ID, hub.Answer{Decision: "deny", Message: "enough tests"}); err != nil {
		t.Fatal(err)
	}
	if r := <-again; r.r.Item.Decision != "deny" || r.r.Item.Answer != "enough tests" {
		t.Errorf("after the rule expired: %+v, want denied by a person", r.r.Item)
	}
	// Every answer is an event in the agent's timeline naming who gave it.
	evs, err := h.ListEvents(ctx, hub.ListEventsRequest{Agent: "ann", Kind: string(hub.EventInboxAnswered)})
	if err != nil || len(evs) != 3 {
		t.Fatalf("answer events = %v, %v; want 3", evs, err)
	}
	for i, by := range []string{"by pat", "by rule", "by operator"} {
		if !strings.Contains(evs[i].Detail, by) {
			t.Errorf("event %d = %q, want it to say %q", i, evs[i].Detail, by)
		}
	}
}

func TestApprovalUnansweredExpiresAndRaceWithAnAnswer(t *testing.T) {
	t.Parallel()
	h := newLoopHub(t)
	ann, _ := h.agent(t, "ann")
	ctx := context.Background()
	type result struct {
		r   *hub.ApprovalResult
		err error
	}
	c := make(chan result, 1)
	go func() {
		r, err := h.inbox.RequestApproval(ctx, ann, hub.ApprovalRequest{Tool: "Bash", Input: `{"command":"ls"}`, CallKey: "k1", Wait: time.Minute})
		c <- result{r, err}
	}()
	waitFor(t, "the request parked", func() bool { return h.Clock.Timers() > 0 })
	h.Clock.Advance(time.Minute) // nobody answers within the wait
	r := <-c
	if r.err != nil || !r.r.TimedOut || r.r.Item.State != hub.ItemExpired {
		t.Fatalf("unanswered: %+v, %v; want timed out and expired", r.r, r.err)
	}
	// The call's context ends first (the host killed the hook): expired too.
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	var r2 *hub.ApprovalResult
	go func() {
		defer wg.Done()
		r2, _ = h.inbox.RequestApproval(cctx, ann, hub.ApprovalRequest{Tool: "Edit", Wait: 20 * time.Second})
	}()
	it := h.openItem(t, hub.KindApproval)
	cancel()
	wg.Wait()
	if r2 == nil || r2.Item.ID != it.ID || r2.Item.State != hub.ItemExpired {
		t.Errorf("after the call ended: %+v, want item %d expired", r2, it.ID)
	}
	// The tool ran at the terminal: the report of its call marks it.
	if err := h.inbox.NoteHost(ctx, ann, hub.HostToolRan, "", "k1"); err != nil {
		t.Fatal(err)
	}
	got, _, err := h.inbox.ListItems(ctx, nil, "expired", "", 0, "")
	if err != nil || len(got) != 2 || got[1].RanAt.IsZero() || !got[0].RanAt.IsZero() {
		t.Errorf("expired items = %+v, %v; want k1's marked ran, Edit's not", got, err)
	}
	// Bad input changes nothing.
	for _, req := range []hub.ApprovalRequest{
		{Input: `{}`, Wait: time.Second},
		{Tool: "Bash", Input: `not json`, Wait: time.Second},
		{Tool: "Bash\x1b[2J", Wait: time.Second},
		{Tool: "Bash", Wait: 0},
	} {
		_, err := h.inbox.RequestApproval(ctx, ann, req)
		wantCode(t, fmt.Sprintf("request %+v", req), err, hub.EINVALID)
	}
	if all, _, _ := h.inbox.ListItems(ctx, nil, "", "", 0, ""); len(all) != 2 {
		t.Errorf("bad requests left items: %d, want 2", len(all))
	}
}

func TestQuestionAnsweredLaterArrivesAsAMessage(t *testing.T) {
	t.Parallel()
	h := newLoopHub(t)
	ann, _ := h.agent(t, "ann")
	ctx := context.Background()
	res, err := h.inbox.AskHuman(ctx, ann, hub.QuestionRequest{Question: "Which region?\nWe have two.", Options: []string{"eu", "us"}, TimeoutSeconds: seconds(0)})
	if err != nil || !res.TimedOut || res.Item.Title != "Which region?" {
		t.Fatalf("ask = %+v, %v; want timed out at once, titled by its first line", res, err)
	}
	if _, err := h.inbox.AnswerItem(ctx, &hub.Person{Name: "pat"}, res.Item.ID, hub.Answer{Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	msgs := h.testHub.inbox(t, ann)
	if len(msgs) != 1 || msgs[0].From != "pat" || !strings.Contains(msgs[0].Body, ": eu") || !strings.Contains(msgs[0].Body, fmt.Sprint(res.Item.ID)) {
		t.Fatalf("messages = %+v, want pat's answer naming the item", msgs)
	}
	_, err = h.inbox.AskHuman(ctx, ann, hub.QuestionRequest{Question: "pick", Options: []string{"a", "a"}})
	wantCode(t, "repeated options", err, hub.EINVALID)
	_, err = h.inbox.AskHuman(ctx, ann, hub.QuestionRequest{Question: "pick", Urgency: "asap"})
	wantCode(t, "a strange urgency", err, hub.EINVALID)
}

func TestNeedsInputOnceUntilTheAgentMovesOn(t *testing.T) {
	t.Parallel()
	h := newLoopHub(t)
	ann, _ := h.agent(t, "ann")
	ctx := context.Background()
	for range 3 {
		if err := h.inbox.NoteHost(ctx, ann, hub.HostNeedsInput, "Claude is waiting for your input", ""); err != nil {
			t.Fatal(err)
		}
	}
	open, _, _ := h.inbox.ListItems(ctx, nil, "open", "", 0, "")
	if len(open) != 1 || open[0].Kind != hub.KindNeedsInput {
		t.Fatalf("open = %+v, want one needs-input item", open)
	}
	if err := h.inbox.NoteHost(ctx, ann, hub.HostActive, "", ""); err != nil {
		t.Fatal(err)
	}
	if open, _, _ := h.inbox.ListItems(ctx, nil, "open", "", 0, ""); len(open) != 0 {
		t.Errorf("after a prompt, open = %+v, want none", open)
	}
	wantCode(t, "an unknown event", h.inbox.NoteHost(ctx, ann, "asleep", "", ""), hub.EINVALID)
}

func TestMessagesToPeople(t *testing.T) {
	t.Parallel()
	h := newLoopHub(t)
	ann, _ := h.agent(t, "ann")
	ctx := context.Background()
	people := hub.NewPeople(h.Core)
	if _, _, err := people.CreatePerson(ctx, "pat", nil); err != nil {
		t.Fatal(err)
	}
	_, _, err := people.CreatePerson(ctx, "ann", nil)
	wantCode(t, "a person named like an agent", err, hub.ECONFLICT)
	_, _, err = people.CreatePerson(ctx, "operator", nil)
	wantCode(t, "a person named operator", err, hub.EINVALID)
	m := h.post(t, ann, hub.PostRequest{To: []string{"operator", "pat"}, Body: "the release is blocked on a decision"})
	if fmt.Sprint(m.To) != "[operator pat]" {
		t.Errorf("to = %v, want the operator and pat", m.To)
	}
	m = h.post(t, ann, hub.PostRequest{Channel: "#ops", Body: "@operator the build is red; @nobody"})
	if fmt.Sprint(m.Mentions) != "[operator]" {
		t.Errorf("mentions = %v, want the operator (and @nobody as text)", m.Mentions)
	}
	_, err = h.Post(ctx, ann, "", hub.PostRequest{To: []string{"nobody"}, Body: "x"})
	wantCode(t, "a name that is neither", err, hub.ENOTFOUND)
	if err := people.RevokePerson(ctx, "pat"); err != nil {
		t.Fatal(err)
	}
	_, err = h.Post(ctx, ann, "", hub.PostRequest{To: []string{"pat"}, Body: "x"})
	wantCode(t, "a revoked person", err, hub.ENOTFOUND)
}

// Past the limit of parked calls an approval is refused and left to the
// terminal (never open forever); a question is asked all the same.
func TestParkedLimit(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(c *hub.Config) { c.WaitLimits.Items = 1 })
	in := th.Inbox
	ann, _ := th.agent(t, "ann")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		in.RequestApproval(ctx, ann, hub.ApprovalRequest{Tool: "Bash", Wait: 20 * time.Second})
	}()
	waitFor(t, "the first request parked", func() bool { return th.Clock.Timers() > 0 }) // its timer starts once it is registered
	_, err := in.RequestApproval(context.Background(), ann, hub.ApprovalRequest{Tool: "Edit", Wait: 20 * time.Second})
	wantCode(t, "a second parked request", err, hub.EEXHAUSTED)
	expired, _, _ := in.ListItems(context.Background(), nil, "expired", "", 0, "")
	if len(expired) != 1 || expired[0].Tool != "Edit" {
		t.Errorf("expired = %+v, want the refused Edit request", expired)
	}
	q, err := in.AskHuman(context.Background(), ann, hub.QuestionRequest{Question: "still there?", TimeoutSeconds: seconds(30)})
	if err != nil || !q.TimedOut || !q.Item.Open() {
		t.Errorf("question past the limit = %+v, %v; want asked, timed out at once", q, err)
	}
	cancel()
	<-done
}
