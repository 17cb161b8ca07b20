package hosts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/test/hosts/model"
)

// claudeRig is Claude Code set up with `hub setup claude --project` for
// one agent of a fresh hub, its model the scripted one.
type claudeRig struct {
	bin, home, proj string
	hub             *testHub
	model           *model.Server
	env             []string
}

func newClaudeRig(t *testing.T, agent string, setupFlags ...string) (*claudeRig, string) {
	t.Helper()
	return newClaudeRigIn(t, agent, true, setupFlags...)
}

// newClaudeRigIn is newClaudeRig set up in the project's config (project)
// or the user's.
func newClaudeRigIn(t *testing.T, agent string, project bool, setupFlags ...string) (*claudeRig, string) {
	t.Helper()
	bin := hostBinary(t, "HUB_TEST_CLAUDE")
	h := startHub(t)
	tok, _ := h.agent(t, agent)
	m, err := model.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	r := &claudeRig{bin: bin, home: t.TempDir(), proj: t.TempDir(), hub: h, model: m}
	dir := r.proj
	if !project {
		dir = ""
	}
	setupHost(t, h, "claude", r.home, dir, tok, nil, setupFlags...)
	r.env = append(baseEnv(r.home),
		"ANTHROPIC_BASE_URL="+m.URL, "ANTHROPIC_API_KEY=sk-ant-hosts-rig",
		// no call leaves the machine: no telemetry, error reports,
		// updates or side traffic
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_NON_ESSENTIAL_MODEL_CALLS=1",
		"CLAUDE_CODE_ENABLE_TELEMETRY=0", "DISABLE_BUG_COMMAND=1", "DISABLE_COST_WARNINGS=1",
	)
	return r, tok
}

// run runs `claude -p prompt` in the project.
func (r *claudeRig) run(t *testing.T, prompt string, args ...string) string {
	t.Helper()
	args = append([]string{"-p", prompt, "--model", "claude-sonnet-4-5"}, args...)
	out, err := runHost(t, r.proj, r.env, hostRunLimit, r.bin, args...)
	if err != nil {
		t.Fatalf("claude -p: %v\n%s\nrequests:\n%s", err, out, describeRequests(r.model.Requests()))
	}
	return out
}

func describeRequests(rs []model.Request) string {
	var sb strings.Builder
	for i, r := range rs {
		b := r.Body
		if len(b) > 600 {
			b = b[:300] + " … " + b[len(b)-300:]
		}
		sb.WriteString(r.At.Format("15:04:05.000") + " " + r.API + " " + r.Path + "\n" + b + "\n")
		_ = i
	}
	return sb.String()
}

// TestClaudeCode drives the real Claude Code (`claude -p`), set up with
// `hub setup claude --project`, against a real hub and the scripted model.
func TestClaudeCode(t *testing.T) {
	t.Parallel() // the hosts run side by side (scripts/ci-hosts.sh: -parallel 3)
	t.Run("mcp-tools", func(t *testing.T) {
		r, _ := newClaudeRig(t, "bob")
		_, ann := r.hub.agent(t, "ann")
		if _, err := ann.PostMessage(t.Context(), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "please check the build"}); err != nil {
			t.Fatal(err)
		}
		r.model.Script(
			model.Call("mcp__hub__post_message", map[string]any{"to": []string{"ann"}, "body": "hello from bob"}),
			model.Call("mcp__hub__read_messages", map[string]any{}),
			model.Call("mcp__hub__mark_read", map[string]any{}),
			model.Call("mcp__hub__wait_for_messages", map[string]any{"timeout_seconds": 0}),
			model.Say("all done"),
		)
		r.run(t, "talk to ann")
		got := r.model.Scripted()
		if len(got) != 5 {
			t.Fatalf("the model got %d scripted requests, want 5\n%s", len(got), describeRequests(r.model.Requests()))
		}
		// Each tool's result reached the model, none an error.
		for i, want := range []string{"ann", "please check the build", "", "cursor"} {
			body := got[i+1].Body
			if !strings.Contains(body, "toolu_") || strings.Contains(body, `"is_error":true`) || !strings.Contains(body, want) {
				t.Errorf("request after tool call %d lacks a good result (want %q):\n%s", i+1, want, lastPart(body))
			}
		}
		rm, err := ann.ListMessages(t.Context(), &hubv1.ListMessagesRequest{})
		if err != nil || len(rm.GetMessages()) != 1 || rm.GetMessages()[0].GetBody() != "hello from bob" {
			t.Errorf("ann's messages = %v, %v; want bob's hello", rm.GetMessages(), err)
		}
		if n := unread(t, r.hub, "bob"); n != 0 {
			t.Errorf("bob's unread after mark_read = %d, want 0", n)
		}
		noApprovals(t, r.hub)
	})

	t.Run("hook-injection", func(t *testing.T) {
		r, _ := newClaudeRig(t, "bob")
		_, ann := r.hub.agent(t, "ann")
		injectionScenario(t, r.hub, ann, r.model, func() { r.run(t, "run two commands", "--allowedTools", "Bash(echo:*)") },
			model.Call("Bash", map[string]any{"command": "echo one", "description": "say one"}),
			model.Call("Bash", map[string]any{"command": "echo two", "description": "say two"}))
	})

	t.Run("ask-and-task", func(t *testing.T) {
		r, _ := newClaudeRig(t, "bob")
		_, ann := r.hub.agent(t, "ann")
		askAndTaskScenario(t, r.hub, ann, r.model, func() { r.run(t, "take a task") }, "mcp__hub__")
	})

	t.Run("session-presence", func(t *testing.T) {
		r, _ := newClaudeRig(t, "bob")
		presenceScenario(t, r.hub, r.model, func() { r.run(t, "say hi", "--allowedTools", "Bash(echo:*)") },
			model.Call("Bash", map[string]any{"command": "echo hi", "description": "say hi"}))
	})

	t.Run("telemetry", func(t *testing.T) {
		rec := startRecorder(t)
		// Claude Code takes telemetry settings from the user's settings
		// only: set up there.
		r, tok := newClaudeRigIn(t, "bob", false, "--otlp", rec.URL)
		rec.forwardTo(r.hub.http)
		r.env = telemetryEnv(r.env)
		telemetryScenario(t, r.hub, rec, "claude", tok, func() int {
			r.model.Script(model.Call("Bash", map[string]any{"command": "echo hi", "description": "say hi"}), model.Say("done"))
			r.run(t, "say hi", "--allowedTools", "Bash(echo:*)")
			return countAPI(r.model.Requests(), "anthropic")
		}, "claude", "Bash", perRequest{input: model.Input, output: model.Output, cacheRead: model.Cached, cacheCreation: model.CacheWrite, cost: true})
	})

	t.Run("approval-allowed", func(t *testing.T) {
		r, _ := newClaudeRig(t, "bob")
		r.model.Script(model.Call("Bash", map[string]any{"command": "touch allowed.txt", "description": "make a file"}), model.Say("made"))
		answered := answerInBackground(t, r.hub, "allow", "")
		r.run(t, "make a file")
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(r.proj, "allowed.txt")); err != nil {
			t.Errorf("the allowed command did not run: %v", err)
		}
		if it := r.hub.approvals(t); len(it) != 1 || it[0].GetState() != "answered" || it[0].GetDecision() != "allow" {
			t.Errorf("approvals = %v, want one answered allow", it)
		}
	})

	t.Run("approval-denied", func(t *testing.T) {
		r, _ := newClaudeRig(t, "bob")
		r.model.Script(model.Call("Bash", map[string]any{"command": "touch denied.txt", "description": "make a file"}), model.Say("ok"))
		answered := answerInBackground(t, r.hub, "deny", "not on the release branch")
		r.run(t, "make a file")
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(r.proj, "denied.txt")); err == nil {
			t.Errorf("the denied command ran")
		}
		got := r.model.Scripted()
		if len(got) < 2 || !strings.Contains(got[1].Body, "not on the release branch") {
			t.Errorf("the model's next request lacks the deny's message:\n%s", describeRequests(r.model.Requests()))
		}
	})

	t.Run("approval-timed-out", func(t *testing.T) {
		r, _ := newClaudeRig(t, "bob", "--approval-wait", "2s")
		r.model.Script(model.Call("Bash", map[string]any{"command": "touch late.txt", "description": "make a file"}), model.Say("ok"))
		r.run(t, "make a file")
		// Left to the host: claude -p has no terminal to ask in, so the
		// command does not run; the item expired.
		if _, err := os.Stat(filepath.Join(r.proj, "late.txt")); err == nil {
			t.Errorf("the command ran with nobody answering")
		}
		if it := r.hub.approvals(t); len(it) != 1 || it[0].GetState() != "expired" {
			t.Errorf("approvals = %v, want one expired", it)
		}
	})
}

// countAPI counts the requests to the model's api.
func countAPI(rs []model.Request, api string) int {
	n := 0
	for _, r := range rs {
		if r.API == api {
			n++
		}
	}
	return n
}

// answerInBackground answers the first approval to open over REST.
func answerInBackground(t *testing.T, h *testHub, decision, message string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := h.answerOverREST(t, decision, message)
		done <- err
	}()
	return done
}

// noApprovals fails the test when a person was asked about anything.
func noApprovals(t *testing.T, h *testHub) {
	t.Helper()
	for _, it := range h.approvals(t) {
		t.Errorf("a person was asked about %s: %v", it.GetTool(), it)
	}
}

// unread is an agent's unread count as the admin sees it.
func unread(t *testing.T, h *testHub, name string) int64 {
	t.Helper()
	r, err := h.admin.ListAgentOverviews(h.actx, &hubv1.ListAgentOverviewsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range r.GetAgents() {
		if o.GetAgent().GetName() == name {
			return o.GetUnreadCount()
		}
	}
	t.Fatalf("no overview of %s", name)
	return 0
}

// lastPart is the end of a request body, where the newest turn is.
func lastPart(body string) string {
	if len(body) > 1500 {
		return "… " + body[len(body)-1500:]
	}
	return body
}

// injectionScenario: a message posted between two tool calls (when the
// model is asked for the second) is in the very next model request, put
// there by the host's after-tool hook, and its receipt says IN_CONTEXT via
// hook.
func injectionScenario(t *testing.T, h *testHub, sender hubv1.AgentServiceClient, m *model.Server, run func(), first, second model.Step) {
	t.Helper()
	var posted string
	second.Before = func(model.Request) {
		p, err := sender.PostMessage(t.Context(), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "mid-turn news from ann"})
		if err != nil {
			t.Error(err)
			return
		}
		posted = p.GetMessage().GetId()
	}
	m.Script(first, second, model.Say("done"))
	run()
	got := m.Scripted()
	// (more may follow: the stop hook holds the turn while it is unread)
	if len(got) < 3 {
		t.Fatalf("the model got %d scripted requests, want at least 3\n%s", len(got), describeRequests(m.Requests()))
	}
	if strings.Contains(got[1].Body, "mid-turn news") || !strings.Contains(got[2].Body, "mid-turn news from ann") {
		t.Errorf("the message posted between two tool calls is not (only) in the very next request:\n%s", lastPart(got[2].Body))
	}
	if rc := h.receipt(t, posted); rc.GetState() != "IN_CONTEXT" || rc.GetVia() != "hook" {
		t.Errorf("receipt = %s via %q, want IN_CONTEXT via hook", rc.GetState(), rc.GetVia())
	}
}

// askAndTaskScenario: the model calls next_task, which hands bob the
// task another agent filed, then ask_human, which a person answers over
// REST while the call waits; each result reaches the model's next request
// (in the tool's output: what it calls), and no person is asked about the
// hub's own tools. prefix is how the host names the hub's tools.
func askAndTaskScenario(t *testing.T, h *testHub, sender hubv1.AgentServiceClient, m *model.Server, run func(), prefix string) {
	t.Helper()
	if _, err := sender.CreateTask(t.Context(), &hubv1.CreateTaskRequest{Task: &hubv1.TaskSpec{Title: "fix the flaky build"}}); err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() {
		_, err := h.answerKind(t, "question", map[string]string{"answer": "yes, ship it on Friday"})
		answered <- err
	}()
	m.Script(
		model.Call(prefix+"next_task", map[string]any{"wait_seconds": 0}),
		model.Call(prefix+"ask_human", map[string]any{"question": "May I ship the fix?", "timeout_seconds": 50}),
		model.Say("done"),
	)
	run()
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	got := m.Scripted()
	if len(got) < 3 {
		t.Fatalf("the model got %d scripted requests, want 3\n%s", len(got), describeRequests(m.Requests()))
	}
	if !strings.Contains(got[1].Body, "fix the flaky build") {
		t.Errorf("next_task's task did not reach the model:\n%s", lastPart(got[1].Body))
	}
	if !strings.Contains(got[2].Body, "yes, ship it on Friday") {
		t.Errorf("the person's answer did not reach the model:\n%s", lastPart(got[2].Body))
	}
	ts, err := sender.ListTasks(t.Context(), &hubv1.ListTasksRequest{})
	if err != nil || len(ts.GetTasks()) != 1 || ts.GetTasks()[0].GetAssignee() != "bob" {
		t.Errorf("tasks = %v, %v; want the one task held by bob", ts.GetTasks(), err)
	}
	noApprovals(t, h)
}

// presenceScenario: bob shows online while the host works and offline as
// soon as the session ended (the session-end hook).
func presenceScenario(t *testing.T, h *testHub, m *model.Server, run func(), call model.Step) {
	t.Helper()
	var during string
	call.Before = func(model.Request) { during = h.presence(t, "bob") }
	m.Script(call, model.Say("bye"))
	run()
	if during == "offline" || during == "" {
		t.Errorf("bob's presence during the session = %q, want online", during)
	}
	if p := h.presence(t, "bob"); p != "offline" {
		t.Errorf("bob's presence after the session ended = %q, want offline", p)
	}
}
