package app_test

import (
	"net/url"
	"strings"
	"testing"
)

// Search over REST: an agent finds what it received, with the words
// marked; the admin finds everything and filters by agent; bad queries
// are 400 with the reason, never 500.
func TestRESTSearch(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice, bob := h.newAgent(t, "alice"), h.newAgent(t, "bob")
	h.newAgent(t, "carol")
	for _, body := range []string{
		`{"to":["bob"],"body":"The staging database is running out of disk"}`,
		`{"to":["carol"],"body":"disk quotas are enforced from Monday"}`,
		`{"to":["bob"],"body":"unrelated chatter"}`,
	} {
		if code, raw, _ := h.do(t, "POST", "/v1/messages", alice, body); code != 200 {
			t.Fatalf("post: HTTP %d %s", code, raw)
		}
	}
	search := func(path, token string, q url.Values) (int, string, []map[string]any) {
		t.Helper()
		code, raw, v := h.do(t, "GET", path+"?"+q.Encode(), token, "")
		var hits []map[string]any
		list, _ := v["hits"].([]any)
		for _, x := range list {
			hit, _ := x.(map[string]any)
			hits = append(hits, hit)
		}
		return code, raw, hits
	}
	code, raw, hits := search("/v1/messages:search", bob, url.Values{"query": {"disks"}, "from": {"alice"}})
	if code != 200 || len(hits) != 1 {
		t.Fatalf("bob's search: HTTP %d %s, want one hit", code, raw)
	}
	if snip, _ := hits[0]["snippet"].(string); !strings.Contains(snip, "**disk**") {
		t.Errorf("snippet %q does not mark disk", snip)
	}
	if m, _ := hits[0]["message"].(map[string]any); m["from"] != "alice" || !strings.Contains(m["body"].(string), "staging database") {
		t.Errorf("hit message = %v", m)
	}
	if code, raw, hits := search("/v1/admin/messages:search", h.token, url.Values{"query": {"disk"}}); code != 200 || len(hits) != 2 {
		t.Errorf("admin search: HTTP %d %s, want two hits", code, raw)
	}
	if code, raw, hits := search("/v1/admin/messages:search", h.token, url.Values{"query": {"disk"}, "agent": {"carol"}}); code != 200 || len(hits) != 1 {
		t.Errorf("admin search of carol's: HTTP %d %s, want one hit", code, raw)
	}
	if code, raw, _ := search("/v1/messages:search", bob, url.Values{"query": {`"disk`}}); code != 400 || !strings.Contains(raw, "unclosed") {
		t.Errorf("unclosed quote: HTTP %d %s, want 400 saying why", code, raw)
	}
	if code, _, _ := search("/v1/admin/messages:search", bob, url.Values{"query": {"disk"}, "agent": {"carol"}}); code != 403 {
		t.Errorf("an agent token naming another agent's messages: HTTP %d, want 403", code)
	}
}

// TestSearchBudget: an agent's searches draw from a budget of their own
// (--search-rate-limit): past it, 429 naming the flag,
// while the agent's other reads go on.
func TestSearchBudget(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice := h.newAgent(t, "alice")
	q := "/v1/messages:search?" + url.Values{"query": {"disk"}}.Encode()
	refused := 0
	for range 30 {
		code, raw, _ := h.do(t, "GET", q, alice, "")
		switch {
		case code == 200:
		case code == 429 && strings.Contains(raw, "--search-rate-limit"):
			refused++
		default:
			t.Fatalf("search: HTTP %d %s", code, raw)
		}
	}
	if refused == 0 || refused > 25 {
		t.Errorf("%d of 30 searches in a burst refused, want those past the burst of 10 (about 20)", refused)
	}
	if code, raw, _ := h.do(t, "GET", "/v1/messages", alice, ""); code != 200 {
		t.Errorf("a list with the search budget spent: HTTP %d %s", code, raw)
	}
}
