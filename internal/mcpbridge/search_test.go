package mcpbridge_test

import (
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/mcpbridge"
)

func TestSearchMessagesTool(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := bridge(t, h.GRPCAddress(), h.createAgent(t, "alice"), mcpbridge.Options{}, nil)
	bob := bridge(t, h.GRPCAddress(), h.createAgent(t, "bob"), mcpbridge.Options{}, nil)
	h.createAgent(t, "carol")

	mustCall(t, alice, "post_message", map[string]any{"to": []string{"bob"}, "body": "The nightly builds are failing on the linker"}, nil)
	mustCall(t, alice, "post_message", map[string]any{"to": []string{"carol"}, "body": "the build failed for carol only"}, nil)
	mustCall(t, alice, "post_message", map[string]any{"to": []string{"bob"}, "body": "lunch?"}, nil)
	mustCall(t, alice, "post_message", map[string]any{"to": []string{"bob"}, "body": "the build is on fire", "priority": "urgent"}, nil)

	var got mcpbridge.SearchMessagesOutput
	res := mustCall(t, bob, "search_messages", map[string]any{"query": "build fail", "author": "@alice"}, &got)
	if len(got.Hits) != 1 || got.Hits[0].From != "alice" || !strings.Contains(got.Hits[0].Snippet, "**builds**") {
		t.Fatalf("search_messages = %+v, want bob's one message with builds marked", got)
	}
	if got.Hits[0].SenderKind != "agent" {
		t.Errorf("search hit's sender_kind = %q, want agent", got.Hits[0].SenderKind)
	}
	if text := resultText(res); !strings.Contains(text, "1 hit") || !strings.Contains(text, "**failing**") || !strings.Contains(text, "alice (agent) →") {
		t.Errorf("search_messages text %q does not show the hit", text)
	}
	var urgent mcpbridge.SearchMessagesOutput
	mustCall(t, bob, "search_messages", map[string]any{"query": "build", "min_priority": "high"}, &urgent)
	if len(urgent.Hits) != 1 || !strings.Contains(urgent.Hits[0].Snippet, "fire") {
		t.Errorf("search_messages min_priority high = %+v, want only the urgent message", urgent)
	}
	res = call(t, bob, "search_messages", map[string]any{"query": `"unclosed`}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "unclosed") {
		t.Errorf("bad query: error %v, text %q; want a tool error saying the quote is unclosed", res.IsError, resultText(res))
	}
	res = call(t, bob, "search_messages", map[string]any{"query": "build", "since": "yesterday"}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "RFC 3339") {
		t.Errorf("bad since: error %v, text %q; want a tool error asking for RFC 3339", res.IsError, resultText(res))
	}
}
