package hub_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestParseSearchTerms(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		query string
		want  [][]string
		err   string // a part of the error message, "" when none
	}{
		{query: "Deploy", want: [][]string{{"deploy"}}},
		{query: "  disk   full ", want: [][]string{{"disk"}, {"full"}}},
		{query: `"disk full" node`, want: [][]string{{"disk", "full"}, {"node"}}},
		{query: `api-V2 Café ÉTÉ`, want: [][]string{{"api", "v2"}, {"café"}, {"ÉtÉ"}}},
		{query: `OR NOT -x* (y)`, want: [][]string{{"or"}, {"not"}, {"x"}, {"y"}}},
		{query: `a "" b`, want: [][]string{{"a"}, {"b"}}},
		{query: "", err: "no word to search for"},
		{query: `-- " "`, err: "no word to search for"},
		{query: `"disk full`, err: "unclosed"},
		{query: strings.Repeat("w ", 17), err: "the most is 16"},
		{query: `"` + strings.Repeat("a ", 20) + `" "` + strings.Repeat("b ", 5) + `"`, err: "25 words, its phrases' included: the most is 24"},
		{query: `"` + strings.Repeat("a ", 20) + `" b c d e`, want: [][]string{slices.Repeat([]string{"a"}, 20), {"b"}, {"c"}, {"d"}, {"e"}}},
		{query: strings.Repeat("x", 513), err: "the most is 512"},
		{query: "\xff", err: "UTF-8"},
	} {
		got, err := hub.ParseSearchTerms(tt.query)
		if tt.err != "" {
			if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSearchTerms(%q) error = %v, want EINVALID saying %q", tt.query, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("ParseSearchTerms(%q) = %q, %v; want %q", tt.query, got, err, tt.want)
		}
	}
}

func TestSearchScopesAndPages(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	alice, _ := h.agent(t, "alice")
	bob, _ := h.agent(t, "bob")
	h.agent(t, "carol")
	post := func(from *hub.Agent, req hub.PostRequest) *hub.Message {
		t.Helper()
		m, err := h.Post(ctx, from, "", req)
		if err != nil {
			t.Fatalf("Post: %v", err)
		}
		return m
	}
	toBob := post(alice, hub.PostRequest{To: []string{"bob"}, Body: "the release is blocked by a flaky test"})
	toCarol := post(alice, hub.PostRequest{To: []string{"carol"}, Body: "secret: the release date moved"})
	if _, err := h.JoinChannel(ctx, bob, "#ops"); err != nil {
		t.Fatal(err)
	}
	inOps := post(alice, hub.PostRequest{Channel: "#ops", Body: "releasing now, releases are fun"})

	ids := func(hits []hub.SearchHit) []int64 {
		out := []int64{}
		for _, hit := range hits {
			out = append(out, hit.Message.ID)
		}
		return out
	}
	// bob finds his direct message and the channel's, never carol's.
	hits, next, err := h.Search(ctx, bob, hub.SearchRequest{Query: "release"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); !slices.Equal(slices.Sorted(slices.Values(got)), []int64{toBob.ID, inOps.ID}) || next != "" {
		t.Errorf("bob's search = %v (next %q), want %d and %d, no next page", got, next, toBob.ID, inOps.ID)
	}
	if hits, _, _ := h.Search(ctx, bob, hub.SearchRequest{Query: "secret"}); len(hits) != 0 {
		t.Errorf("bob found carol's message: %v", ids(hits))
	}
	// The admin finds everything, or what one agent received.
	all, _, err := h.AdminSearch(ctx, hub.SearchRequest{Query: "release"})
	if err != nil || len(all) != 3 {
		t.Errorf("admin search = %v, %v; want 3 messages", ids(all), err)
	}
	if got, _, err := h.AdminSearch(ctx, hub.SearchRequest{Query: "release", Agent: "carol"}); err != nil || !slices.Equal(ids(got), []int64{toCarol.ID}) {
		t.Errorf("admin search of carol's = %v, %v; want [%d]", ids(got), err, toCarol.ID)
	}
	// Pages of one follow each other without repeats.
	var paged []int64
	token := ""
	for range 4 {
		hits, next, err := h.AdminSearch(ctx, hub.SearchRequest{Query: "release", Limit: 1, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, ids(hits)...)
		if token = next; token == "" {
			break
		}
	}
	if !slices.Equal(paged, ids(all)) {
		t.Errorf("pages of one = %v, want %v", paged, ids(all))
	}
	// Pruned messages are not found any more.
	h.Clock.Advance(time.Hour)
	if _, err := h.PruneMessages(ctx, h.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _, err := h.AdminSearch(ctx, hub.SearchRequest{Query: "release"}); err != nil || len(got) != 0 {
		t.Errorf("after pruning, admin search = %v, %v; want nothing", ids(got), err)
	}
}

func TestSearchRefusesBadInput(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	bob, _ := h.agent(t, "bob")
	now := h.Clock.Now()
	for _, tt := range []struct {
		req  hub.SearchRequest
		code string
		want string
	}{
		{hub.SearchRequest{Query: `"open`}, hub.EINVALID, "unclosed"},
		{hub.SearchRequest{Query: "x", From: "Bad Name"}, hub.EINVALID, "not a sender name"},
		{hub.SearchRequest{Query: "x", Channel: "ops"}, hub.EINVALID, "channel"},
		{hub.SearchRequest{Query: "x", Thread: "abc"}, hub.EINVALID, "thread"},
		{hub.SearchRequest{Query: "x", Since: now, Until: now}, hub.EINVALID, "must be after since"},
		{hub.SearchRequest{Query: "x", PageToken: "zz"}, hub.EINVALID, "page_token"},
		{hub.SearchRequest{Query: "x", PageToken: "999999"}, hub.EINVALID, "page_token"},
		{hub.SearchRequest{Query: "x", Limit: -1}, hub.EINVALID, "negative"},
		{hub.SearchRequest{Query: "x", MinPriority: 9}, hub.EINVALID, "low, normal, high, urgent"},
		{hub.SearchRequest{Query: "x", Agent: "carol"}, hub.EINVALID, "admin filter"},
	} {
		if _, _, err := h.Search(ctx, bob, tt.req); hub.ErrorCode(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Search(%+v) error = %v, want %s saying %q", tt.req, err, tt.code, tt.want)
		}
	}
	if _, _, err := h.AdminSearch(ctx, hub.SearchRequest{Query: "x", Agent: "nobody"}); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("AdminSearch of an unknown agent: error = %v, want ENOTFOUND", err)
	}
}
