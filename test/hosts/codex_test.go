package hosts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/test/hosts/model"
)

// codexRig is Codex set up with `hub setup codex` for one agent of a fresh
// hub, in a CODEX_HOME of its own, its model provider the scripted model.
type codexRig struct {
	bin, home, proj string
	hub             *testHub
	model           *model.Server
	env             []string
}

func newCodexRig(t *testing.T, agent string, setupFlags ...string) (*codexRig, string) {
	t.Helper()
	return newCodexRigAsking(t, agent, "never", "danger-full-access", setupFlags...)
}

// newCodexRigAsking is newCodexRig with Codex's approval policy and
// sandbox mode: "on-request" in a "read-only" sandbox asks before a
// command that asks to leave the sandbox, which `codex exec` runs the
// PermissionRequest hook for under --approve-for-me.
func newCodexRigAsking(t *testing.T, agent, policy, sandbox string, setupFlags ...string) (*codexRig, string) {
	t.Helper()
	bin := hostBinary(t, "HUB_TEST_CODEX")
	h := startHub(t)
	tok, _ := h.agent(t, agent)
	m, err := model.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	r := &codexRig{bin: bin, home: t.TempDir(), proj: t.TempDir(), hub: h, model: m}
	codexHome := filepath.Join(r.home, "codex-home")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	// The provider first: hub setup merges into what is there.
	config := `model = "gpt-5"
model_provider = "rig"
approval_policy = "` + policy + `"
sandbox_mode = "` + sandbox + `"
check_for_update_on_startup = false

[model_providers.rig]
name = "scripted model"
base_url = "` + m.URL + `/v1"
wire_api = "responses"
env_key = "RIG_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
`
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	setupHost(t, h, "codex", r.home, "", tok, []string{"CODEX_HOME=" + codexHome}, setupFlags...)
	r.env = append(baseEnv(r.home), "CODEX_HOME="+codexHome, "RIG_API_KEY=rig")
	return r, tok
}

// run runs `codex exec prompt` in the project. Codex runs a hook only
// once it is trusted: the hooks run on the trust hub setup wrote.
func (r *codexRig) run(t *testing.T, prompt string, flags ...string) string {
	t.Helper()
	args := append([]string{"exec", "--skip-git-repo-check"}, flags...)
	args = append(args, prompt)
	out, err := runHost(t, r.proj, r.env, hostRunLimit, r.bin, args...)
	if err != nil {
		t.Fatalf("codex exec: %v\n%s\nrequests:\n%s", err, out, describeRequests(r.model.Requests()))
	}
	return out
}

// TestCodex drives the real Codex (`codex exec`), set up with `hub setup
// codex` under CODEX_HOME, against a real hub and the scripted model.
func TestCodex(t *testing.T) {
	t.Parallel() // the hosts run side by side (scripts/ci-hosts.sh: -parallel 3)
	t.Run("mcp-tools", func(t *testing.T) {
		r, _ := newCodexRig(t, "bob")
		_, ann := r.hub.agent(t, "ann")
		if _, err := ann.PostMessage(t.Context(), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "please check the build"}); err != nil {
			t.Fatal(err)
		}
		r.model.Script(
			model.Call("mcp__hub__post_message", map[string]any{"to": []string{"ann"}, "body": "hello from bob"}),
			model.Call("mcp__hub__read_messages", map[string]any{}),
			model.Call("mcp__hub__mark_read", map[string]any{}),
			model.Say("all done"),
		)
		out := r.run(t, "talk to ann")
		got := r.model.Scripted()
		if len(got) < 4 {
			t.Fatalf("the model got %d scripted requests, want 4\n%s\n%s", len(got), out, describeRequests(r.model.Requests()))
		}
		// What an agent must read reaches a model that sees only the
		// structured content: the post's delivery note.
		for i, want := range []string{"Stored for ann", "please check the build", "unread_count"} {
			body := got[i+1].Body
			if outs := toolOutputs(body); len(outs) != i+1 || !strings.Contains(outs[i], want) {
				t.Errorf("request after tool call %d: outputs %q, want the last with %q", i+1, outs, want)
			}
		}
		rm, err := ann.ListMessages(t.Context(), &hubv1.ListMessagesRequest{})
		if err != nil || len(rm.GetMessages()) != 1 || rm.GetMessages()[0].GetBody() != "hello from bob" {
			t.Errorf("ann's messages = %v, %v; want bob's hello", rm.GetMessages(), err)
		}
		noApprovals(t, r.hub)
	})

	t.Run("hook-injection", func(t *testing.T) {
		r, _ := newCodexRig(t, "bob")
		_, ann := r.hub.agent(t, "ann")
		injectionScenario(t, r.hub, ann, r.model, func() { r.run(t, "run two commands") },
			model.Call("exec_command", map[string]any{"cmd": "echo one"}),
			model.Call("exec_command", map[string]any{"cmd": "echo two"}))
	})

	t.Run("telemetry", func(t *testing.T) {
		rec := startRecorder(t)
		r, tok := newCodexRig(t, "bob", "--otlp", rec.URL)
		rec.forwardTo(r.hub.http)
		r.env = telemetryEnv(r.env)
		telemetryScenario(t, r.hub, rec, "codex", tok, func() int {
			r.model.Script(model.Call("exec_command", map[string]any{"cmd": "echo hi"}), model.Say("done"))
			r.run(t, "say hi")
			return countAPI(r.model.Requests(), "openai")
		}, "gpt-5", "exec_command", perRequest{input: model.Input, output: model.Output, cacheRead: model.Cached})
	})

	t.Run("ask-and-task", func(t *testing.T) {
		r, _ := newCodexRig(t, "bob")
		_, ann := r.hub.agent(t, "ann")
		askAndTaskScenario(t, r.hub, ann, r.model, func() { r.run(t, "take a task") }, "mcp__hub__")
	})

	t.Run("approval-allowed", func(t *testing.T) {
		r, _ := newCodexRigAsking(t, "bob", "on-request", "read-only")
		r.model.Script(model.Call("exec_command", map[string]any{"cmd": "touch allowed.txt", "sandbox_permissions": "require_escalated", "justification": "make a file"}), model.Say("made"))
		answered := answerInBackground(t, r.hub, "allow", "")
		out := r.run(t, "make a file", "--approve-for-me")
		if err := <-answered; err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(r.proj, "allowed.txt")); err != nil {
			t.Errorf("the allowed command did not run: %v\n%s", err, out)
		}
		if it := r.hub.approvals(t); len(it) != 1 || it[0].GetState() != "answered" || it[0].GetDecision() != "allow" {
			t.Errorf("approvals = %v, want one answered allow", it)
		}
	})

	t.Run("approval-denied", func(t *testing.T) {
		r, _ := newCodexRigAsking(t, "bob", "on-request", "read-only")
		r.model.Script(model.Call("exec_command", map[string]any{"cmd": "touch denied.txt", "sandbox_permissions": "require_escalated", "justification": "make a file"}), model.Say("ok"))
		answered := answerInBackground(t, r.hub, "deny", "not on the release branch")
		out := r.run(t, "make a file", "--approve-for-me")
		if err := <-answered; err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(r.proj, "denied.txt")); err == nil {
			t.Errorf("the denied command ran")
		}
		got := r.model.Scripted()
		if len(got) < 2 || !strings.Contains(got[1].Body, "not on the release branch") {
			t.Errorf("the model's next request lacks the deny's message:\n%s", describeRequests(r.model.Requests()))
		}
	})

	t.Run("session-presence", func(t *testing.T) {
		r, _ := newCodexRig(t, "bob")
		presenceScenario(t, r.hub, r.model, func() { r.run(t, "say hi") },
			model.Call("exec_command", map[string]any{"cmd": "echo hi"}))
	})
}

// toolOutputs are the outputs of the function calls a Responses API
// request carries, in order.
func toolOutputs(body string) []string {
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	_ = json.Unmarshal([]byte(body), &req)
	var out []string
	for _, in := range req.Input {
		if in.Type == "function_call_output" {
			out = append(out, string(in.Output))
		}
	}
	return out
}
