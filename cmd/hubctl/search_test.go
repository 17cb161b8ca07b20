package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMessagesSearch(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	h.addAgent(t, "alice")
	h.addAgent(t, "bob")
	h.hubctl(t, nil, "send", "--to", "alice", "the deploy of v2 failed at step three").must(t)
	h.hubctl(t, nil, "send", "--to", "bob", "all deploys postponed").must(t)
	h.hubctl(t, nil, "send", "--to", "bob", "lunch at noon").must(t)
	h.hubctl(t, nil, "send", "--to", "alice", "--priority", "high", "deploy frozen until the audit").must(t)

	r := h.hubctl(t, nil, "messages", "search", "deploying").must(t)
	if n := strings.Count(r.stdout, "\n"); n != 4 || !strings.Contains(r.stdout, "**deploy**") || !strings.Contains(r.stdout, "SCORE") {
		t.Errorf("messages search deploying: want a header and 3 hits with the word marked:\n%s", r.stdout)
	}
	r = h.hubctl(t, nil, "messages", "search", "--agent", "bob", "--limit", "1", "-o", "json", "deploy").must(t)
	var out struct {
		Hits []struct {
			Message struct{ Body string } `json:"message"`
		} `json:"hits"`
		Next string `json:"next_page_token"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Hits) != 1 || out.Hits[0].Message.Body != "all deploys postponed" || out.Next != "" {
		t.Errorf("messages search --agent bob -o json = %s (%v), want bob's one hit and no next page", r.stdout, err)
	}
	r = h.hubctl(t, nil, "messages", "search", "--min-priority", "high", "-o", "json", "deploy").must(t)
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Hits) != 1 || out.Hits[0].Message.Body != "deploy frozen until the audit" {
		t.Errorf("messages search --min-priority high -o json = %s (%v), want the high message only", r.stdout, err)
	}
	if r = h.hubctl(t, nil, "messages", "search", "--min-priority", "loud", "x"); r.code != 2 || !strings.Contains(r.stderr, "--min-priority") {
		t.Errorf("bad --min-priority: exit %d, stderr %q; want 2 naming the flag", r.code, r.stderr)
	}
	r = h.hubctl(t, nil, "messages", "search", "--limit", "1", "deploy").must(t)
	if !strings.Contains(r.stdout, "--page 1") {
		t.Errorf("a first page of one: want the next page's command:\n%s", r.stdout)
	}
	if r = h.hubctl(t, nil, "messages", "search", "--since", "1h", `"step`); r.code != 1 || !strings.Contains(r.stderr, "unclosed") {
		t.Errorf("unclosed quote: exit %d, stderr %q; want 1 and the reason", r.code, r.stderr)
	}
	if r = h.hubctl(t, nil, "messages", "search"); r.code != 2 {
		t.Errorf("no query: exit %d, want 2 (usage)", r.code)
	}
	if r = h.hubctl(t, nil, "messages", "search", "--until", "someday", "x"); r.code != 2 || !strings.Contains(r.stderr, "--until") {
		t.Errorf("bad --until: exit %d, stderr %q; want 2 naming the flag", r.code, r.stderr)
	}
}
