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

// geminiRig is Gemini CLI set up with `hub setup gemini` for one agent of
// a fresh hub, in a GEMINI_CLI_HOME of its own, its Gemini API the
// scripted model (GOOGLE_GEMINI_BASE_URL).
type geminiRig struct {
	bin, home, proj string
	hub             *testHub
	model           *model.Server
	env             []string
}

func newGeminiRig(t *testing.T, agent string, setupFlags ...string) (*geminiRig, string) {
	t.Helper()
	bin := hostBinary(t, "HUB_TEST_GEMINI")
	h := startHub(t)
	tok, _ := h.agent(t, agent)
	m, err := model.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	r := &geminiRig{bin: bin, home: t.TempDir(), proj: t.TempDir(), hub: h, model: m}
	geminiHome := filepath.Join(r.home, "gemini-home")
	// No call leaves the machine: no usage statistics, telemetry or
	// update check. hub setup merges the hub into these settings.
	settings := map[string]any{
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.MkdirAll(filepath.Join(geminiHome, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(geminiHome, ".gemini", "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// Gemini CLI skips settings hooks in an untrusted folder: the
	// project is trusted, as a person does at Gemini's first start there.
	trusted, _ := json.Marshal(map[string]string{r.proj: "TRUST_FOLDER"})
	if err := os.WriteFile(filepath.Join(geminiHome, ".gemini", "trustedFolders.json"), trusted, 0o600); err != nil {
		t.Fatal(err)
	}
	setupHost(t, h, "gemini", r.home, "", tok, []string{"GEMINI_CLI_HOME=" + geminiHome}, setupFlags...)
	r.env = append(baseEnv(r.home), "GEMINI_CLI_HOME="+geminiHome,
		"GOOGLE_GEMINI_BASE_URL="+m.URL, "GEMINI_API_KEY=rig",
		"GEMINI_TELEMETRY_ENABLED=false", "GEMINI_CLI_NO_RELAUNCH=true")
	return r, tok
}

// run runs `gemini -p prompt` in the project.
func (r *geminiRig) run(t *testing.T, prompt string, args ...string) string {
	t.Helper()
	args = append([]string{"-p", prompt, "--model", "gemini-2.5-pro"}, args...)
	out, err := runHost(t, r.proj, r.env, hostRunLimit, r.bin, args...)
	if err != nil {
		t.Fatalf("gemini -p: %v\n%s\nrequests:\n%s", err, out, describeRequests(r.model.Requests()))
	}
	return out
}

// TestGemini drives the real Gemini CLI (`gemini -p`), set up with `hub
// setup gemini` under GEMINI_CLI_HOME, against a real hub and the scripted
// model.
func TestGemini(t *testing.T) {
	t.Parallel() // the hosts run side by side (scripts/ci-hosts.sh: -parallel 3)
	t.Run("mcp-tools", func(t *testing.T) {
		r, _ := newGeminiRig(t, "bob")
		_, ann := r.hub.agent(t, "ann")
		if _, err := ann.PostMessage(t.Context(), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "please check the build"}); err != nil {
			t.Fatal(err)
		}
		r.model.Script(
			model.Call("mcp_hub_post_message", map[string]any{"to": []string{"ann"}, "body": "hello from bob"}),
			model.Call("mcp_hub_read_messages", map[string]any{}),
			model.Say("all done"),
		)
		r.run(t, "talk to ann", "--yolo")
		got := r.model.Scripted()
		if len(got) < 3 {
			t.Fatalf("the model got %d scripted requests, want 3", len(got))
		}
		if !strings.Contains(got[2].Body, "please check the build") {
			t.Errorf("the read's result did not reach the model:\n%s", lastPart(got[2].Body))
		}
		rm, err := ann.ListMessages(t.Context(), &hubv1.ListMessagesRequest{})
		if err != nil || len(rm.GetMessages()) != 1 || rm.GetMessages()[0].GetBody() != "hello from bob" {
			t.Errorf("ann's messages = %v, %v; want bob's hello", rm.GetMessages(), err)
		}
	})

	t.Run("hook-injection", func(t *testing.T) {
		r, _ := newGeminiRig(t, "bob")
		_, ann := r.hub.agent(t, "ann")
		injectionScenario(t, r.hub, ann, r.model, func() { r.run(t, "run two commands", "--yolo") },
			model.Call("run_shell_command", map[string]any{"command": "echo one"}),
			model.Call("run_shell_command", map[string]any{"command": "echo two"}))
	})

	t.Run("telemetry", func(t *testing.T) {
		rec := startRecorder(t)
		r, tok := newGeminiRig(t, "bob", "--otlp", rec.URL)
		rec.forwardTo(r.hub.http)
		// Gemini CLI has no headers helper: the token comes from its
		// environment, as hub setup tells the user.
		r.env = append(telemetryEnv(r.env), "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer "+tok)
		telemetryScenario(t, r.hub, rec, "gemini", tok, func() int {
			r.model.Script(model.Call("run_shell_command", map[string]any{"command": "echo hi"}), model.Say("done"))
			r.run(t, "say hi", "--yolo")
			return countAPI(r.model.Requests(), "gemini")
		}, "gemini", "run_shell_command", perRequest{input: model.Input, output: model.Output + model.Reasoning, cacheRead: model.Cached})
	})

	t.Run("ask-and-task", func(t *testing.T) {
		r, _ := newGeminiRig(t, "bob")
		_, ann := r.hub.agent(t, "ann")
		askAndTaskScenario(t, r.hub, ann, r.model, func() { r.run(t, "take a task", "--yolo") }, "mcp_hub_")
	})

	t.Run("session-presence", func(t *testing.T) {
		r, _ := newGeminiRig(t, "bob")
		presenceScenario(t, r.hub, r.model, func() { r.run(t, "say hi", "--yolo") },
			model.Call("run_shell_command", map[string]any{"command": "echo hi"}))
	})
}
