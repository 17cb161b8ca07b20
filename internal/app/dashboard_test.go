package app_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// The dashboard's stream on a real hub: a REST post to an agent announces
// "messages" (the notifier that wakes waits), an agent's write call
// announces "agents", and stopping the hub ends the stream at once instead
// of holding the shutdown up.
func TestDashboardStream(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	tok := h.newAgent(t, "watched")

	if code, body, _ := h.do(t, "GET", "/", "", ""); code != 200 || !strings.Contains(body, "Admin token") {
		t.Fatalf("GET / = %d", code)
	}
	req, _ := http.NewRequest("GET", h.base+"/v1/admin/stream", nil)
	req.Header.Set("Authorization", "Bearer "+tok) // an agent token is not the admin token
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("stream with an agent token: %d, want 403 (as every admin call answers an agent token)", res.StatusCode)
	}

	req.Header.Set("Authorization", "Bearer "+h.token)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	waitFor := func(topic string) {
		t.Helper()
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, "data: ") && strings.Contains(l, `"`+topic+`"`) {
				return
			}
		}
		t.Fatalf("stream ended before %q: %v", topic, lines.Err())
	}
	waitFor("version") // hello

	if code, body, _ := h.do(t, "POST", "/v1/admin/messages", h.token, `{"to":["watched"],"body":"hello"}`); code != 200 {
		t.Fatalf("post: %d %s", code, body)
	}
	waitFor("messages")
	if _, err := h.agent.Checkpoint(coreBearer(tok), &hubv1.CheckpointRequest{CurrentActivity: "reading"}); err != nil {
		t.Fatal(err)
	}
	waitFor("agents")

	closed := make(chan error, 1)
	go func() { closed <- h.m.Close() }()
	for lines.Scan() {
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return with a stream open")
	}
	if n := h.m.Services.Core.Feed().Count(); n != 0 {
		t.Errorf("subscribers after Close: %d", n)
	}
}

// An agent's call that writes nothing a page reads on a notice publishes
// no "agents" change: a heartbeat, a hook's injection, stop check and host
// event with nothing new. A call that commits something shown does, and so
// does an injection that hands a message out (its receipt changes).
func TestDashboardNoticeOnlyForWhatChanged(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	tok := h.newAgent(t, "watched")
	ctx := coreBearer(tok)
	feed := h.m.Services.Core.Feed()
	sub, err := feed.Subscribe(hub.Principal{}, feed.Epoch())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// noticed reports whether the calls since the last look announced
	// "agents" (the interceptor publishes before the call answers).
	noticed := func() bool { return sub.Take().Has(hub.TopicAgents) }

	if _, err := h.agent.Heartbeat(ctx, &hubv1.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.agent.TakeInjection(ctx, &hubv1.TakeInjectionRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.agent.CheckStop(ctx, &hubv1.CheckStopRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.agent.NoteHostEvent(ctx, &hubv1.NoteHostEventRequest{Event: "active"}); err != nil {
		t.Fatal(err)
	}
	if noticed() {
		t.Error(`a heartbeat and a hook's calls with nothing new announced "agents"`)
	}

	if _, err := h.agent.CreateActivityLog(ctx, &hubv1.CreateActivityLogRequest{Type: "thinking", Title: "reading"}); err != nil {
		t.Fatal(err)
	}
	if !noticed() {
		t.Error(`an activity log did not announce "agents"`)
	}
	if code, body, _ := h.do(t, "POST", "/v1/admin/messages", h.token, `{"to":["watched"],"body":"hello"}`); code != 200 {
		t.Fatalf("post: %d %s", code, body)
	}
	if !noticed() {
		t.Error(`a post did not announce "agents"`)
	}
	r, err := h.agent.TakeInjection(ctx, &hubv1.TakeInjectionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetMessages()) != 1 {
		t.Fatalf("injection took %d messages, want the post", len(r.GetMessages()))
	}
	if !noticed() {
		t.Error(`an injection that handed a message out did not announce "agents"`)
	}
}

// The admin calls the dashboard reads, over REST: answers, and bad input
// refused with what is wrong.
func TestDashboardRESTCalls(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	tok := h.newAgent(t, "worker")
	if code, body, _ := h.do(t, "POST", "/v1/checkpoints", tok, `{"current_activity":"reading"}`); code != 200 {
		t.Fatalf("checkpoint: %d %s", code, body)
	}
	code, body, v := h.do(t, "GET", "/v1/admin/agent-overviews", h.token, "")
	agents, _ := v["agents"].([]any)
	if code != 200 || len(agents) != 1 || !strings.Contains(body, `"parked_waits":0`) || !strings.Contains(body, `"unread_count":"0"`) {
		t.Errorf("agent-overviews = %d %s", code, body)
	}
	code, body, v = h.do(t, "GET", "/v1/admin/agents/worker/activity?limit=5", h.token, "")
	if cps, _ := v["checkpoints"].([]any); code != 200 || len(cps) != 1 || !strings.Contains(body, "reading") {
		t.Errorf("activity = %d %s", code, body)
	}
	if code, body, _ := h.do(t, "POST", "/v1/channels:join", tok, `{"channel":"#ops"}`); code != 200 {
		t.Fatalf("join: %d %s", code, body)
	}
	if code, body, _ := h.do(t, "GET", "/v1/admin/channels", h.token, ""); code != 200 || !strings.Contains(strings.ReplaceAll(body, " ", ""), `{"name":"#ops","member_count":"1","joined":false,"project":"default"}`) {
		t.Errorf("channels = %d %s", code, body)
	}
	for _, c := range []struct {
		method, path string
		code         int
		says         string
	}{
		{"GET", "/v1/admin/agents/nobody/activity", 404, "nobody"},
		{"GET", "/v1/admin/agents/worker/activity?limit=-1", 400, "limit"},
		{"POST", "/v1/admin/agents/worker/deep-work:end", 400, "no active deep work"},
		{"POST", "/v1/admin/agents/nobody/deep-work:end", 404, "nobody"},
	} {
		body := ""
		if c.method == "POST" {
			body = "{}"
		}
		code, got, _ := h.do(t, c.method, c.path, h.token, body)
		if code != c.code || !strings.Contains(got, c.says) {
			t.Errorf("%s %s = %d %s, want %d saying %q", c.method, c.path, code, got, c.code, c.says)
		}
	}
	if code, body, _ := h.do(t, "POST", "/v1/deep-work", tok, `{"mode":"flexible","planned_activity":"parser"}`); code != 200 {
		t.Fatalf("start deep work: %d %s", code, body)
	}
	code, body, _ = h.do(t, "POST", "/v1/admin/agents/worker/deep-work:end", h.token, "{}")
	if code != 200 || !strings.Contains(body, `"state":"completed"`) {
		t.Errorf("end deep work = %d %s", code, body)
	}
	if _, body, _ := h.do(t, "GET", "/v1/deep-work", tok, ""); !strings.Contains(body, `"current":null`) {
		t.Errorf("deep work still current after the admin ended it: %s", body)
	}
}

// The stream carries the agents' rows that changed, in the REST API's
// shape: a post's recipient with its unread count (not the sender, whose
// row did not change), an agent's checkpoint, an agent the admin creates,
// and the name of one the admin deletes; a row sent before goes as a
// change, with the fields that changed only, or the count it clears.
func TestDashboardStreamRows(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	senderTok := h.newAgent(t, "sender")
	readerTok := h.newAgent(t, "reader")
	if _, err := h.agent.Heartbeat(coreBearer(senderTok), &hubv1.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}

	req, _ := http.NewRequest("GET", h.base+"/v1/admin/stream", nil)
	req.Header.Set("Authorization", "Bearer "+h.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	lines.Buffer(make([]byte, 64<<10), 4<<20)
	// next returns the data of the next event named event.
	next := func(event string) string {
		t.Helper()
		name := ""
		for lines.Scan() {
			l := lines.Text()
			if e, ok := strings.CutPrefix(l, "event: "); ok {
				name = e
			} else if d, ok := strings.CutPrefix(l, "data: "); ok && name == event {
				return d
			}
		}
		t.Fatalf("stream ended before an %q event: %v", event, lines.Err())
		return ""
	}
	type row struct {
		Agent struct {
			Name string `json:"name"`
		} `json:"agent"`
		Unread string `json:"unread_count"`
	}
	type change struct {
		Row     row      `json:"row"`
		Cleared []string `json:"cleared"`
	}
	var changes map[string]change // the last event's changes by name
	// rows returns the next agents event's whole rows by name and its gone
	// names; its changes go to changes.
	rows := func() (map[string]row, []string) {
		t.Helper()
		var ev struct {
			Beat    string   `json:"beat"`
			Rows    []row    `json:"rows"`
			Changes []change `json:"changes"`
			Gone    []string `json:"gone"`
		}
		if err := json.Unmarshal([]byte(next("agents")), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Beat == "" {
			t.Error("agents event without the beat")
		}
		by := map[string]row{}
		for _, r := range ev.Rows {
			by[r.Agent.Name] = r
		}
		changes = map[string]change{}
		for _, c := range ev.Changes {
			changes[c.Row.Agent.Name] = c
		}
		return by, ev.Gone
	}
	if hello := next("hello"); !strings.Contains(hello, `"deltas":true`) {
		t.Fatalf("hello %s does not announce the rows", hello)
	}

	if _, err := h.agent.PostMessage(coreBearer(senderTok), &hubv1.PostMessageRequest{To: []string{"reader"}, Body: "news"}); err != nil {
		t.Fatal(err)
	}
	by, _ := rows()
	if r, ok := by["reader"]; !ok || r.Unread != "1" {
		t.Errorf("after a post to reader: rows %v, want reader with 1 unread", by)
	}
	if _, ok := by["sender"]; ok {
		t.Errorf("the sender's row was sent: %v", by)
	}
	if _, err := h.agent.PostMessage(coreBearer(senderTok), &hubv1.PostMessageRequest{To: []string{"reader"}, Body: "more"}); err != nil {
		t.Fatal(err)
	}
	if by, _ = rows(); len(by) != 0 || changes["reader"].Row.Unread != "2" || len(changes) != 1 {
		t.Errorf("after a second post to reader: rows %v, changes %v; want reader's change to 2 unread only", by, changes)
	}
	if _, err := h.agent.MarkRead(coreBearer(readerTok), &hubv1.MarkReadRequest{}); err != nil {
		t.Fatal(err)
	}
	if by, _ = rows(); len(by) != 0 || !slices.Contains(changes["reader"].Cleared, "unread_count") || changes["reader"].Row.Unread != "" {
		t.Errorf("after reader marked all read: rows %v, changes %v; want reader's change clearing unread_count", by, changes)
	}

	// A row marked again but unchanged is not sent again.
	h.m.Services.Core.Feed().AgentNamed("reader")
	time.Sleep(time.Second) // a few of the stream's passes
	if _, err := h.agent.Checkpoint(coreBearer(senderTok), &hubv1.CheckpointRequest{CurrentActivity: "reading"}); err != nil {
		t.Fatal(err)
	}
	if by, _ = rows(); len(by) != 1 || by["sender"].Agent.Name != "sender" {
		t.Errorf("after reader marked unchanged and sender's checkpoint: rows %v, want sender's only", by)
	}

	h.newAgent(t, "newcomer")
	if by, _ = rows(); by["newcomer"].Agent.Name != "newcomer" {
		t.Errorf("after creating newcomer: rows %v", by)
	}
	if _, err := h.admin.DisableAgent(h.adm, &hubv1.DisableAgentRequest{Name: "newcomer"}); err != nil {
		t.Fatal(err)
	}
	rows() // newcomer, disabled (the page drops it)
	if _, err := h.admin.DeleteAgent(h.adm, &hubv1.DeleteAgentRequest{Name: "newcomer"}); err != nil {
		t.Fatal(err)
	}
	if _, gone := rows(); !slices.Equal(gone, []string{"newcomer"}) {
		t.Errorf("after deleting newcomer: gone %v", gone)
	}
}
