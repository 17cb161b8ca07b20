package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/mcpbridge"
)

func TestToolsListResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	cs := bridge(t, h.GRPCAddress(), h.createAgent(t, "lister"), mcpbridge.Options{}, nil)
	ctx := context.Background()

	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 40 || len(tool.Description) > 400 {
			t.Errorf("%s: description is %d chars, want a concise one (40-400): %q", tool.Name, len(tool.Description), tool.Description)
		}
		in, _ := tool.InputSchema.(map[string]any)
		if in["type"] != "object" {
			t.Errorf("%s: input schema type = %v, want object", tool.Name, in["type"])
		}
		props, _ := in["properties"].(map[string]any)
		for _, forbidden := range []string{"agent", "from", "as", "token", "sender"} {
			if _, ok := props[forbidden]; ok {
				t.Errorf("%s: has an input %q: identity must come from the token only", tool.Name, forbidden)
			}
		}
	}
	slices.Sort(names)
	want := []string{"acknowledge_message", "ask_human", "block_task", "check_hub_status", "checkpoint", "claim_task", "complete_task", "create_activity_log",
		"get_heartbeat_elapsed_time", "heartbeat", "join_channel", "list_agents", "list_channels", "list_reservations", "list_tasks",
		"mark_read", "next_task", "post_message", "read_messages", "release_paths", "reserve_paths", "respond_to_pulse",
		"search_messages", "start_deep_work", "wait_for_messages"}
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}

	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpbridge.GuidelinesURI})
	if err != nil {
		t.Fatalf("ReadResource: %v", err)
	}
	text := rr.Contents[0].Text
	for _, topic := range []string{"heartbeat", "checkpoint", "start_deep_work", "flexible", "strict", "reflection", "wait_for_messages", "cursor", "HEARTBEAT_OK", "respond_to_pulse"} {
		if !strings.Contains(text, topic) {
			t.Errorf("guidelines do not mention %q", topic)
		}
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 1 || lr.Resources[0].URI != mcpbridge.GuidelinesURI {
		t.Errorf("ListResources = %+v, %v; want the guidelines", lr, err)
	}
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "join-hub"})
	if err != nil {
		t.Fatalf("GetPrompt: %v", err)
	}
	if got := pr.Messages[0].Content.(*mcp.TextContent).Text; !strings.HasPrefix(got, text) {
		t.Errorf("the join-hub prompt does not teach the guidelines")
	}
	if ir := cs.InitializeResult(); !strings.Contains(ir.Instructions, mcpbridge.GuidelinesURI) {
		t.Errorf("instructions %q do not point to the guidelines", ir.Instructions)
	}
}

func TestEveryToolAgainstTheHub(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := bridge(t, h.GRPCAddress(), h.createAgent(t, "alice"), mcpbridge.Options{}, nil)
	bob := bridge(t, h.GRPCAddress(), h.createAgent(t, "bob"), mcpbridge.Options{}, nil)

	var hb mcpbridge.HeartbeatOutput
	mustCall(t, alice, "heartbeat", nil, &hb)
	if !regexp.MustCompile(`^\d{14}$`).MatchString(hb.HeartbeatID) {
		t.Errorf("heartbeat_id = %q, want 14 digits", hb.HeartbeatID)
	}

	var st mcpbridge.StatusOutput
	mustCall(t, alice, "check_hub_status", nil, &st)
	if st.Agent != "alice" {
		t.Errorf("check_hub_status agent = %q, want alice", st.Agent)
	}

	var post mcpbridge.PostMessageOutput
	res := mustCall(t, alice, "post_message", map[string]any{"to": []string{"bob"}, "body": "hello @bob"}, &post)
	if post.ID == "" || !slices.Equal(post.To, []string{"bob"}) {
		t.Errorf("post_message = %+v, want an ID and to=[bob]", post)
	}
	if !strings.Contains(resultText(res), post.ID) {
		t.Errorf("post_message text %q does not name the message ID", resultText(res))
	}
	var chPost mcpbridge.PostMessageOutput
	mustCall(t, alice, "post_message", map[string]any{"channel": "general", "body": "to the channel", "reply_to": post.ID}, &chPost)
	if chPost.Channel != "#general" {
		t.Errorf("channel post went to %q, want #general", chPost.Channel)
	}

	mustCall(t, bob, "check_hub_status", nil, &st)
	if st.Agent != "bob" || st.UnreadCount < 1 || st.MentionCount < 1 {
		t.Errorf("bob's status = %+v, want unread and a mention", st)
	}

	var read mcpbridge.ReadMessagesOutput
	res = mustCall(t, bob, "read_messages", nil, &read)
	i := slices.IndexFunc(read.Messages, func(m mcpbridge.Message) bool { return m.ID == post.ID })
	if i < 0 {
		t.Fatalf("bob's unread = %+v, want message %s", read.Messages, post.ID)
	}
	if m := read.Messages[i]; m.From != "alice" || m.Body != "hello @bob" || !m.MentionsYou || !m.Unread {
		t.Errorf("message = %+v, want from alice, the body, mentions_you, unread", m)
	}
	if !strings.Contains(resultText(res), "hello @bob") {
		t.Errorf("read_messages text %q lacks the body", resultText(res))
	}

	var mr mcpbridge.MarkReadOutput
	mustCall(t, bob, "mark_read", map[string]any{"up_to_id": post.ID}, &mr)
	if mr.ReadUpToID != post.ID {
		t.Errorf("mark_read = %+v, want read up to %s", mr, post.ID)
	}
	var second mcpbridge.PostMessageOutput
	mustCall(t, alice, "post_message", map[string]any{"to": []string{"bob"}, "body": "second"}, &second)
	mustCall(t, bob, "read_messages", map[string]any{"mark_read": true}, &read)
	if len(read.Messages) != 1 || read.Messages[0].ID != second.ID || read.UnreadCount == nil || *read.UnreadCount != 0 {
		t.Errorf("read_messages mark_read = %+v, want message %s and 0 unread left", read, second.ID)
	}
	mustCall(t, bob, "mark_read", nil, &mr)
	if mr.UnreadCount != 0 {
		t.Errorf("mark_read all left %d unread", mr.UnreadCount)
	}
	mustCall(t, bob, "read_messages", map[string]any{"all": true, "after": "0"}, &read)
	if len(read.Messages) == 0 || read.Cursor == "" {
		t.Errorf("read_messages all = %+v, want the read messages and a cursor", read)
	}

	var w mcpbridge.WaitOutput
	mustCall(t, bob, "wait_for_messages", map[string]any{"timeout_seconds": 0}, &w)
	if len(w.Messages) != 0 || w.Cursor != second.ID {
		t.Errorf("peek with nothing unread = %+v, want no messages and cursor %s", w, second.ID)
	}

	// The liveness tools: each runs as soon as its RPC lands in the hub.
	t.Run("create_activity_log", func(t *testing.T) {
		var log mcpbridge.CreateActivityLogOutput
		res := call(t, alice, "create_activity_log", map[string]any{"type": "observation", "title": "read the spec", "content": "line one\nline two", "tags": []string{"spec"}}, &log)
		if res.IsError || log.ID == "" || log.HeartbeatID != hb.HeartbeatID || log.Type != "observation" {
			t.Errorf("create_activity_log = %+v (%s), want an ID under heartbeat %s", log, resultText(res), hb.HeartbeatID)
		}
		res = call(t, alice, "create_activity_log", map[string]any{"type": "内省", "title": "looked back"}, &log)
		if res.IsError || log.Type != "reflection" {
			t.Errorf("create_activity_log 内省 = %+v (%s), want type reflection", log, resultText(res))
		}
	})
	t.Run("checkpoint", func(t *testing.T) {
		var cp mcpbridge.CheckpointOutput
		res := call(t, alice, "checkpoint", map[string]any{"current_activity": "writing tests"}, &cp)
		if res.IsError || cp.HeartbeatID != hb.HeartbeatID || cp.ID == "" {
			t.Errorf("checkpoint = %+v (%s), want heartbeat %s", cp, resultText(res), hb.HeartbeatID)
		}
	})
	t.Run("start_deep_work", func(t *testing.T) {
		var dw mcpbridge.StartDeepWorkOutput
		res := call(t, alice, "start_deep_work", map[string]any{"mode": "flexible", "planned_activity": "refactor"}, &dw)
		if res.IsError || dw.DeepWork.Mode != "flexible" || dw.DeepWork.PlannedActivity != "refactor" {
			t.Errorf("start_deep_work flexible = %+v (%s)", dw, resultText(res))
		}
		res = call(t, alice, "start_deep_work", map[string]any{"mode": "strict", "planned_activity": "benchmark", "planned_minutes": 20}, &dw)
		if res.IsError || dw.DeepWork.Mode != "strict" || dw.DeepWork.EndsAt == "" || dw.Replaced == nil {
			t.Errorf("start_deep_work strict = %+v (%s), want an end time and the flexible one replaced", dw, resultText(res))
		}
		var st mcpbridge.StatusOutput
		mustCall(t, alice, "check_hub_status", nil, &st)
		if st.DeepWork == nil || st.DeepWork.Mode != "strict" {
			t.Errorf("status deep_work = %+v, want the strict declaration", st.DeepWork)
		}
	})
	t.Run("get_heartbeat_elapsed_time", func(t *testing.T) {
		var el mcpbridge.ElapsedOutput
		res := call(t, alice, "get_heartbeat_elapsed_time", nil, &el)
		if res.IsError || el.HeartbeatID != hb.HeartbeatID || el.Formatted == "" {
			t.Errorf("get_heartbeat_elapsed_time = %+v (%s)", el, resultText(res))
		}
		res = call(t, alice, "get_heartbeat_elapsed_time", map[string]any{"heartbeat_id": "29991231235959"}, nil)
		if !res.IsError || !strings.Contains(resultText(res), "future") {
			t.Errorf("a future heartbeat ID gave %q, want an error saying it is in the future", resultText(res))
		}
	})
	t.Run("respond_to_pulse", func(t *testing.T) {
		var pulse mcpbridge.RespondToPulseOutput
		res := call(t, alice, "respond_to_pulse", map[string]any{"text": "HEARTBEAT_OK"}, &pulse)
		// Without a pending pulse the hub may refuse; either way the answer is readable.
		if !res.IsError && pulse.Outcome == "" {
			t.Errorf("respond_to_pulse = %+v, want an outcome", pulse)
		}
		if res.IsError && resultText(res) == "" {
			t.Errorf("respond_to_pulse error without text")
		}
	})
}

func TestBadInputIsAToolError(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	cs := bridge(t, h.GRPCAddress(), h.createAgent(t, "sloppy"), mcpbridge.Options{}, nil)
	h.createAgent(t, "other")
	tests := []struct {
		tool string
		args map[string]any
		want string // in the error text
	}{
		{"post_message", map[string]any{"to": []string{"other"}, "body": "  "}, "body is empty"},
		{"post_message", map[string]any{"body": "hi"}, "no recipient"},
		{"post_message", map[string]any{"to": []string{"nobody-here"}, "body": "hi"}, "list_agents"},
		{"post_message", map[string]any{"to": "other", "body": "hi"}, "to"},
		{"read_messages", map[string]any{"after": "abc"}, "not a message ID"},
		{"read_messages", map[string]any{"limit": -1}, "limit"},
		{"mark_read", map[string]any{"up_to_id": "x1"}, "not a message ID"},
		{"wait_for_messages", map[string]any{"timeout_seconds": -5}, "timeout_seconds"},
		{"wait_for_messages", map[string]any{"after": "soon"}, "not a message ID"},
		{"wait_for_messages", map[string]any{"timeout_seconds": 61}, "timeout_seconds"},
		{"read_messages", map[string]any{"limit": 101}, "limit"},
		{"wait_for_messages", map[string]any{"timeout_seconds": "ten"}, "timeout_seconds"},
		{"create_activity_log", map[string]any{"type": "nap", "title": "x"}, "thinking observation"},
		{"create_activity_log", map[string]any{"type": "thinking", "title": " "}, "title is required"},
		{"checkpoint", map[string]any{"current_activity": ""}, "current_activity is required"},
		{"start_deep_work", map[string]any{"mode": "deep", "planned_activity": "x"}, "flexible strict"},
		{"start_deep_work", map[string]any{"mode": "strict", "planned_activity": "x"}, "planned_minutes"},
		{"start_deep_work", map[string]any{"mode": "strict", "planned_activity": "x", "until": "tomorrow"}, "RFC 3339"},
		{"start_deep_work", map[string]any{"mode": "flexible", "planned_activity": ""}, "planned_activity is required"},
		{"get_heartbeat_elapsed_time", map[string]any{"heartbeat_id": "2026-01-01"}, "YYYYMMDDHHMMSS"},
		{"respond_to_pulse", map[string]any{"text": ""}, "HEARTBEAT_OK"},
		{"heartbeat", map[string]any{"extra": 1}, `unknown argument "extra": this tool takes none`},
		{"post_message", map[string]any{"to": []string{"other"}, "body": "hi", "chanel": "#x"}, `unknown argument "chanel": this tool takes ack, body, channel,`},
		{"join_channel", map[string]any{"channel": " "}, "is invalid"},
		{"join_channel", map[string]any{"channel": "#Bad Name"}, "is invalid"},
		{"join_channel", map[string]any{"channel": "#never-made", "leave": true}, "never-made"},
		{"claim_task", map[string]any{"id": "77"}, "no task 77"},
		{"complete_task", map[string]any{"id": "x"}, "not a task ID"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v", tt.tool, tt.args), func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args, nil)
			if !res.IsError {
				t.Fatalf("got success %s, want a tool error", resultText(res))
			}
			if got := resultText(res); !strings.Contains(got, tt.want) {
				t.Errorf("error %q does not contain %q", got, tt.want)
			}
		})
	}
}

func TestBadTokenNamesTheFix(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	cs := bridge(t, h.GRPCAddress(), "not-a-token", mcpbridge.Options{}, nil)
	res := call(t, cs, "check_hub_status", nil, nil)
	if !res.IsError || !strings.Contains(resultText(res), "HUB_TOKEN") {
		t.Errorf("with a bad token: %q, want an error naming HUB_TOKEN", resultText(res))
	}
	none := bridge(t, h.GRPCAddress(), "", mcpbridge.Options{}, nil)
	res = call(t, none, "heartbeat", nil, nil)
	if !res.IsError || !strings.Contains(resultText(res), "HUB_TOKEN") {
		t.Errorf("without a token: %q, want an error naming HUB_TOKEN", resultText(res))
	}
}

func TestHubDownThenBack(t *testing.T) {
	t.Parallel()
	// Reserve a port, free it, and point the bridge there before any hub runs.
	addr, start := restartableHub(t)

	cs := bridge(t, addr, "tok", mcpbridge.Options{}, nil)
	res := call(t, cs, "check_hub_status", nil, nil)
	want := "cannot reach the hub at " + addr
	if !res.IsError || !strings.Contains(resultText(res), want) || !strings.Contains(resultText(res), "`hub`") {
		t.Fatalf("hub down: %q, want %q and how to start it", resultText(res), want)
	}

	h := start()
	t.Cleanup(func() { h.Close() })
	tok := h.createAgent(t, "phoenix")
	cs = bridge(t, addr, tok, mcpbridge.Options{}, nil)
	// The same session keeps working across the outage too: covered by the
	// lazily connecting client, which recovers without a restart.
	var st mcpbridge.StatusOutput
	eventuallyTrue(t, 10*time.Second, "the bridge to reach the restarted hub", func() bool {
		res := call(t, cs, "check_hub_status", nil, &st)
		return !res.IsError
	})
	if st.Agent != "phoenix" {
		t.Errorf("agent = %q, want phoenix", st.Agent)
	}
}

func TestOneSessionRecoversWhenTheHubComesBack(t *testing.T) {
	t.Parallel()
	// Start a hub first to mint a token, stop it, then restart it on the
	// same port and data dir while the bridge session stays open.
	addr, start := restartableHub(t)
	h := start()
	tok := h.createAgent(t, "lazarus")
	cs := bridge(t, addr, tok, mcpbridge.Options{}, nil)
	mustCall(t, cs, "check_hub_status", nil, nil)
	h.Close()

	res := call(t, cs, "check_hub_status", nil, nil)
	if !res.IsError || !strings.Contains(resultText(res), "cannot reach the hub at "+addr) {
		t.Fatalf("hub stopped: %q, want the unreachable error", resultText(res))
	}
	h = start()
	t.Cleanup(func() { h.Close() })
	eventuallyTrue(t, 10*time.Second, "the same session to reach the restarted hub", func() bool {
		return !call(t, cs, "check_hub_status", nil, nil).IsError
	})
}

// A hub that is up but cannot serve a call (here its database is full)
// is not worded as a hub that is not running: the tool error gives the
// hub's reason.
func TestHubUpButUnavailableIsNotDown(t *testing.T) {
	t.Parallel()
	h := startHub(t, func(m *app.Main) { m.MaxDBSize = 4 << 20 })
	tok := h.createAgent(t, "filler")
	h.createAgent(t, "sink")
	cs := bridge(t, h.GRPCAddress(), tok, mcpbridge.Options{}, nil)
	body := strings.Repeat("x", 60<<10)
	for range 200 {
		res := call(t, cs, "post_message", map[string]any{"to": []string{"sink"}, "body": body}, nil)
		if !res.IsError {
			continue
		}
		text := resultText(res)
		if !strings.HasPrefix(text, "the hub cannot serve this now (") || !strings.Contains(text, "disk full") {
			t.Fatalf("the hub's database full: %q, want the hub's reason (disk full), not that it is not running", text)
		}
		return
	}
	t.Fatal("200 posts of 60 KiB went into a 4 MiB database")
}

func TestWaitWakesWhenAnotherAgentPosts(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	a := bridge(t, h.GRPCAddress(), h.createAgent(t, "poster"), mcpbridge.Options{}, nil)
	b := bridge(t, h.GRPCAddress(), h.createAgent(t, "sleeper"), mcpbridge.Options{}, nil)

	var peek mcpbridge.WaitOutput
	mustCall(t, b, "wait_for_messages", map[string]any{"timeout_seconds": 0}, &peek)

	type result struct {
		out WaitOutput
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		var w WaitOutput
		mustCall(t, b, "wait_for_messages", map[string]any{"timeout_seconds": 30, "after": peek.Cursor}, &w)
		done <- result{w, time.Now()}
	}()
	eventuallyTrue(t, 5*time.Second, "sleeper to park", func() bool { return h.parkedWaiters(t) == 1 })
	var post mcpbridge.PostMessageOutput
	posted := time.Now()
	mustCall(t, a, "post_message", map[string]any{"to": []string{"sleeper"}, "body": "wake up"}, &post)
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("sleeper did not wake within 20s of the post")
	}
	if r.out.TimedOut || len(r.out.Messages) != 1 || r.out.Messages[0].ID != post.ID || r.out.Messages[0].From != "poster" {
		t.Fatalf("wake-up = %+v, want message %s from poster", r.out, post.ID)
	}
	if r.out.Cursor != post.ID {
		t.Errorf("cursor = %q, want %q", r.out.Cursor, post.ID)
	}
	t.Logf("wake-up latency (post_message sent → wait returned): %v", r.at.Sub(posted))

	// Resuming with the cursor parks again instead of returning the same message.
	var again mcpbridge.WaitOutput
	mustCall(t, b, "wait_for_messages", map[string]any{"timeout_seconds": 1, "after": r.out.Cursor}, &again)
	if !again.TimedOut || len(again.Messages) != 0 {
		t.Errorf("wait after the cursor = %+v, want an empty timeout", again)
	}
}

// WaitOutput aliases the exported type for brevity in goroutines.
type WaitOutput = mcpbridge.WaitOutput

func TestWaitProgressAndSmallEmptyWakeUp(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	var (
		mu    sync.Mutex
		notes []*mcp.ProgressNotificationParams
	)
	cs := bridge(t, h.GRPCAddress(), h.createAgent(t, "patient"), mcpbridge.Options{ProgressInterval: 200 * time.Millisecond},
		&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			notes = append(notes, req.Params)
			mu.Unlock()
		}})
	params := &mcp.CallToolParams{Name: "wait_for_messages", Arguments: map[string]any{"timeout_seconds": 2}}
	params.SetProgressToken(42)
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("wait: %v %s", err, resultText(res))
	}
	mu.Lock()
	n := len(notes)
	mu.Unlock()
	if n < 3 {
		t.Errorf("got %d progress notifications during a 2s wait at 200ms, want several", n)
	}
	for _, p := range notes {
		if fmt.Sprint(p.ProgressToken) != "42" || p.Total != 2 || p.Message == "" {
			t.Errorf("progress = %+v, want token 42, total 2 and a message", p)
			break
		}
	}
	var w mcpbridge.WaitOutput
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &w)
	if !w.TimedOut {
		t.Errorf("wait = %+v, want timed_out", w)
	}
	// An empty wake-up costs at most 150 tokens. Tokens are estimated as
	// characters / 3, on the safe side of the ~4 characters a token that BPE
	// tokenizers average on English and JSON.
	size := len(b) + len(resultText(res))
	if size > 150*3 {
		t.Errorf("empty wake-up is %d chars: %s %s", size, b, resultText(res))
	}
	t.Logf("empty wake-up: %d chars: %s | %s", size, b, resultText(res))
}

func TestCancelFreesTheHubWaiter(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	cs := bridge(t, h.GRPCAddress(), h.createAgent(t, "quitter"), mcpbridge.Options{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_messages", Arguments: map[string]any{"timeout_seconds": 60}})
		errc <- err
	}()
	eventuallyTrue(t, 5*time.Second, "the wait to park", func() bool { return h.parkedWaiters(t) == 1 })
	cancelled := time.Now()
	cancel()
	<-errc
	eventuallyTrue(t, 5*time.Second, "the hub's parked waiters to go back to 0", func() bool { return h.parkedWaiters(t) == 0 })
	t.Logf("hub waiter freed %v after the MCP request was cancelled", time.Since(cancelled))
	// The session is still usable.
	mustCall(t, cs, "check_hub_status", nil, nil)
}

func TestAgentsCannotActAsEachOther(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	a := bridge(t, h.GRPCAddress(), h.createAgent(t, "ann"), mcpbridge.Options{}, nil)
	b := bridge(t, h.GRPCAddress(), h.createAgent(t, "ben"), mcpbridge.Options{}, nil)
	c := bridge(t, h.GRPCAddress(), h.createAgent(t, "cat"), mcpbridge.Options{}, nil)

	var post mcpbridge.PostMessageOutput
	mustCall(t, c, "post_message", map[string]any{"to": []string{"ben"}, "body": "for ben only"}, &post)

	// Ann sees nothing of Ben's inbox, however she asks.
	for _, args := range []map[string]any{nil, {"all": true}, {"all": true, "after": "0"}} {
		var read mcpbridge.ReadMessagesOutput
		mustCall(t, a, "read_messages", args, &read)
		for _, m := range read.Messages {
			if m.ID == post.ID {
				t.Errorf("ann read ben's message with %v", args)
			}
		}
	}
	var w mcpbridge.WaitOutput
	mustCall(t, a, "wait_for_messages", map[string]any{"timeout_seconds": 0, "after": "0"}, &w)
	if slices.ContainsFunc(w.Messages, func(m mcpbridge.Message) bool { return m.ID == post.ID }) {
		t.Errorf("ann's wait returned ben's message")
	}
	// A "from" argument is not part of the schema; extra arguments do not
	// change the sender.
	var p2 mcpbridge.PostMessageOutput
	res := call(t, a, "post_message", map[string]any{"to": []string{"ben"}, "body": "who am I", "from": "cat"}, &p2)
	if !res.IsError {
		var read mcpbridge.ReadMessagesOutput
		mustCall(t, b, "read_messages", nil, &read)
		for _, m := range read.Messages {
			if m.ID == p2.ID && m.From != "ann" {
				t.Errorf("message posted by ann arrived from %q", m.From)
			}
		}
	}
	// Ben's marks do not touch Ann's unread state and vice versa.
	mustCall(t, b, "mark_read", nil, nil)
	var st mcpbridge.StatusOutput
	mustCall(t, b, "check_hub_status", nil, &st)
	if st.Agent != "ben" || st.UnreadCount != 0 {
		t.Errorf("ben's status = %+v", st)
	}
}

func TestPulseRoundTrip(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	cs := bridge(t, h.GRPCAddress(), h.createAgent(t, "pulsed"), mcpbridge.Options{}, nil)
	_, err := h.admin.SetPulseConfig(h.adminCtx(), &hubv1.SetPulseConfigRequest{Config: &hubv1.PulseConfig{
		Agent: "pulsed", Enabled: true, IntervalSeconds: 3600, Instructions: "Check your inbox.",
	}})
	if isCode(err, codes.Unimplemented) {
		t.Skip("pulses are not implemented in the hub yet")
	}
	if err != nil {
		t.Fatalf("SetPulseConfig: %v", err)
	}
	var peek mcpbridge.WaitOutput
	mustCall(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 0}, &peek)
	if _, err := h.admin.TriggerPulse(h.adminCtx(), &hubv1.TriggerPulseRequest{Name: "pulsed"}); err != nil {
		t.Fatalf("TriggerPulse: %v", err)
	}
	var w mcpbridge.WaitOutput
	res := mustCall(t, cs, "wait_for_messages", map[string]any{"after": peek.Cursor, "timeout_seconds": 10}, &w)
	if len(w.Messages) != 1 || w.Messages[0].Kind != "pulse" {
		t.Fatalf("wait after a pulse = %+v, want one message of kind pulse", w)
	}
	if !strings.Contains(resultText(res), "respond_to_pulse") {
		t.Errorf("the wake-up text %q does not say how to answer the pulse", resultText(res))
	}
	var out mcpbridge.RespondToPulseOutput
	res = mustCall(t, cs, "respond_to_pulse", map[string]any{"text": "HEARTBEAT_OK"}, &out)
	if out.Outcome != "suppressed_ok" || !out.Pending || !strings.HasPrefix(resultText(res), "Pulse answered") {
		t.Errorf("HEARTBEAT_OK = %+v %q, want suppressed_ok to a pending pulse", out, resultText(res))
	}
	// A second answer finds no pulse waiting and says so.
	res = mustCall(t, cs, "respond_to_pulse", map[string]any{"text": "HEARTBEAT_OK"}, &out)
	if out.Pending || !strings.Contains(resultText(res), "nothing to answer") {
		t.Errorf("second answer = %+v %q, want it to say there was nothing to answer", out, resultText(res))
	}
}
