package app_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDeliveryOverREST: over the real HTTP listener, a post to an agent
// no path reaches names it in its reply; the same agent parked in a wait
// is reachable in its peers' list and the admin's, and a message its wait
// returns is in its context through the wait in the sender's receipts; a
// path confirms through POST /v1/messages:confirmDelivery (bad input is a
// 4xx naming what is wrong, and records nothing); POST /v1/session:end
// shows the agent offline at once.
func TestDeliveryOverREST(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice, bob := h.newAgent(t, "alice"), h.newAgent(t, "bob")

	code, raw, v := h.do(t, "POST", "/v1/messages", alice, `{"to":["bob"],"body":"are you there?"}`)
	if code != 200 || !strings.Contains(raw, `"unreachable":["bob"]`) || !strings.Contains(v["delivery_note"].(string), "Stored for bob: never connected yet") {
		t.Fatalf("post to bob, never connected: HTTP %d %s; want bob named unreachable", code, raw)
	}
	first := v["message"].(map[string]any)["id"].(string)

	// bob parks a wait past the first message.
	done := make(chan map[string]any, 1)
	go func() {
		_, _, w := h.do(t, "POST", "/v1/messages:wait", bob, `{"timeout_seconds":30,"after_id":"`+first+`"}`)
		done <- w
	}()
	h.parked(t, 1)
	_, raw, _ = h.do(t, "GET", "/v1/peers", alice, "")
	var peers struct {
		Peers []struct {
			Name      string
			Reachable bool
			Paths     []struct {
				Kind string
				Live bool
			}
		}
	}
	json.Unmarshal([]byte(raw), &peers)
	var bobPeer string
	for _, p := range peers.Peers {
		if p.Name == "bob" && p.Reachable && len(p.Paths) == 1 && p.Paths[0].Kind == "wait" && p.Paths[0].Live {
			bobPeer = p.Name
		}
	}
	if bobPeer == "" {
		t.Fatalf("alice's peers %s: want bob reachable by a live wait", raw)
	}
	if _, raw, _ := h.do(t, "GET", "/v1/admin/agents/bob", h.token, ""); !strings.Contains(raw, `"reachable":true`) || !strings.Contains(raw, `"kind":"wait"`) {
		t.Errorf("the admin's view of bob: %s; want reachable by a wait", raw)
	}
	code, raw, v = h.do(t, "POST", "/v1/messages", alice, `{"to":["bob"],"body":"the build is green"}`)
	if code != 200 || !strings.Contains(raw, `"unreachable":[]`) || v["delivery_note"] != "" {
		t.Errorf("post to bob parked: HTTP %d %s; want nobody named unreachable", code, raw)
	}
	second := v["message"].(map[string]any)["id"].(string)
	if w := <-done; len(w["messages"].([]any)) != 1 {
		t.Fatalf("bob's wait = %v, want the second message", w)
	}
	receipt := func(id string) map[string]any {
		t.Helper()
		code, raw, v := h.do(t, "GET", "/v1/messages/"+id+"/receipts", alice, "")
		rs, _ := v["receipts"].([]any)
		if code != 200 || len(rs) != 1 {
			t.Fatalf("receipts of %s: HTTP %d %s", id, code, raw)
		}
		return rs[0].(map[string]any)
	}
	if r := receipt(second); r["state"] != "IN_CONTEXT" || r["via"] != "wait" || r["in_context_at"] == nil {
		t.Errorf("receipt of the waited message: %v, want IN_CONTEXT via wait", r)
	}
	if r := receipt(first); r["state"] != "QUEUED" || r["via"] != "" || r["in_context_at"] != nil {
		t.Errorf("receipt of the first message (never handed out): %v, want QUEUED", r)
	}

	for _, tt := range []struct {
		body string
		code int
		says string
	}{
		{`{"ids":["` + first + `"],"via":"wait"}`, 400, "is not one of hook, channel, tmux"},
		{`{"ids":[],"via":"hook"}`, 400, "ids is empty"},
		{`{"ids":["999999"],"via":"hook"}`, 404, "not among the messages delivered to you"},
	} {
		if code, raw, _ := h.do(t, "POST", "/v1/messages:confirmDelivery", bob, tt.body); code != tt.code || !strings.Contains(raw, tt.says) {
			t.Errorf("confirm %s: HTTP %d %s; want %d saying %q", tt.body, code, raw, tt.code, tt.says)
		}
	}
	if r := receipt(first); r["state"] != "QUEUED" {
		t.Errorf("after refused confirmations: %v, want QUEUED still", r)
	}
	if code, raw, _ := h.do(t, "POST", "/v1/messages:confirmDelivery", bob, `{"ids":["`+first+`"],"via":"hook"}`); code != 200 {
		t.Fatalf("confirm: HTTP %d %s", code, raw)
	}
	if r := receipt(first); r["state"] != "IN_CONTEXT" || r["via"] != "hook" {
		t.Errorf("after the hook confirmed it: %v, want IN_CONTEXT via hook", r)
	}

	if code, raw, _ := h.do(t, "POST", "/v1/session:end", bob, `{"via":"hook"}`); code != 200 {
		t.Fatalf("end session: HTTP %d %s", code, raw)
	}
	if _, raw, _ := h.do(t, "GET", "/v1/admin/agents/bob", h.token, ""); !strings.Contains(raw, `"presence":"offline"`) {
		t.Errorf("bob after his session ended: %s; want offline at once", raw)
	}
	if code, raw, _ := h.do(t, "POST", "/v1/session:end", bob, `{"via":"tmux"}`); code != 400 || !strings.Contains(raw, "hook, channel") {
		t.Errorf("end session via tmux: HTTP %d %s; want 400 naming hook, channel", code, raw)
	}
}
