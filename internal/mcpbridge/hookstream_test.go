package mcpbridge_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hook"
	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// With hub mcp holding its stream, a hook run costs the hub no call of its
// own, hence no connection: a tool use after a message gets the message
// from the bridge, which took the injection on its stream and handed the
// hook its output; the hook prints it, and the bridge confirms it on the
// stream (IN_CONTEXT via hook). With nothing new the bridge answers alone.
func TestBridgeTakesItsHooksInjectionOnItsStream(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	addr, web := h.GRPCAddress(), h.HTTPAddress()
	alice := newPoster(t, addr, h.createAgent(t, "alice"))
	bob := h.createAgent(t, "bob")
	rt, err := os.MkdirTemp("", "hb") // short: a socket's path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	sock := filepath.Join(rt, "agent-hub", "bob.sock")
	bridgeOver(t, addr, bob, mcpbridge.Options{HookSocket: sock, HookOutput: hook.InjectOutput}, nil,
		func(t mcp.Transport) mcp.Transport { return t }, legacyHandshake)
	eventuallyTrue(t, 10*time.Second, "the bridge's watch stream", func() bool { return h.parkedWaiters(t) == 1 })
	// hook runs bob's hook of a tool use as hub-hook does, and reports
	// whether the bridge answered it, and what it printed.
	hook := func() (string, bool) {
		var out bytes.Buffer
		exit, ok, _ := hooklocal.Answered(context.Background(), hooklocal.Hosts["claude"], "PostToolUse",
			strings.NewReader(`{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls"}}`), &out,
			hooklocal.Options{Addr: addr, Token: bob, Socket: sock})
		if exit != 0 {
			t.Errorf("the hook exits %d, want 0", exit)
		}
		return out.String(), ok
	}

	id := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "the build is green"})
	alone, carried := rpcCounts(t, web, "")
	receipts := rpcCount(t, web, "GetMessageReceipts") // the test's own
	var out string
	eventuallyTrue(t, 10*time.Second, "a hook that shows the message", func() bool {
		o, ok := hook()
		if !ok {
			t.Fatalf("the bridge sent a tool use's hook to the hub; printed %q", o)
		}
		out += o
		return strings.Contains(o, "the build is green")
	})
	if !strings.Contains(out, `"hookEventName":"PostToolUse"`) || !strings.Contains(out, "["+id+"]") {
		t.Errorf("the hook printed %q, want the host's additional context with message %s", out, id)
	}
	eventuallyTrue(t, 10*time.Second, "the message in bob's context via hook", func() bool {
		r := h.receipt(t, id, "bob")
		return r.GetState() == "IN_CONTEXT" && r.GetVia() == "hook"
	})
	if a, c := rpcCounts(t, web, ""); a-(rpcCount(t, web, "GetMessageReceipts")-receipts) != alone || c <= carried {
		t.Errorf("the hub answered %d calls of their own (the test's reads of receipts among them) and %d carried by streams during the hooks, want none of their own and some carried", a-alone, c-carried)
	}
	if a, c := rpcCounts(t, web, "TakeInjection"); a != 0 || c == 0 {
		t.Errorf("TakeInjection: %d calls of their own, %d carried; want 0 and some", a, c)
	}
	if a, c := rpcCounts(t, web, "ConfirmDelivery"); a != 0 || c != 1 {
		t.Errorf("ConfirmDelivery: %d calls of their own, %d carried; want 0 and 1", a, c)
	}

	// Nothing new: the bridge answers alone, and the hub answers nothing.
	eventuallyTrue(t, 10*time.Second, "a hook with nothing new answered by the bridge alone", func() bool {
		alone, carried := rpcCounts(t, web, "")
		o, ok := hook()
		a, c := rpcCounts(t, web, "")
		return ok && o == "" && a == alone && c == carried
	})
}
