package app_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// The list's path filter over REST is bounded as a reservation is: too
// many paths, or a pattern past the limits, is a 400 naming the limit,
// before any matching.
func TestRESTReservationFilterBounds(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice := h.newAgent(t, "alice")
	if code, body, _ := h.do(t, "POST", "/v1/reservations", alice, `{"paths":["src/**/*.go"],"mode":"shared"}`); code != 200 {
		t.Fatalf("alice reserves: %d %s", code, body)
	}
	q := url.Values{}
	for i := range 101 {
		q.Add("paths", fmt.Sprintf("d%d", i))
	}
	for _, tc := range []struct{ what, query, want string }{
		{"101 paths", q.Encode(), "limit is 100"},
		{"510 stars", "paths=" + url.QueryEscape(strings.Repeat("a*", 510)+"c"), "limit is 4"},
		{"120 segments", "paths=" + url.QueryEscape(strings.TrimSuffix(strings.Repeat("**/*/", 60), "/")), "limit is 32"},
	} {
		code, body, _ := h.do(t, "GET", "/v1/reservations?"+tc.query, alice, "")
		if code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: GET /v1/reservations = %d %.200s; want 400 saying %q", tc.what, code, body, tc.want)
		}
		code, body, _ = h.do(t, "GET", "/v1/admin/reservations?"+tc.query, h.token, "")
		if code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: GET /v1/admin/reservations = %d %.200s; want 400 saying %q", tc.what, code, body, tc.want)
		}
	}
}

// Over REST: an agent's exclusive ** is a 403 naming the admin's command;
// the admin's POST /v1/admin/reservations reserves it for the agent.
func TestRESTWholeProjectReservation(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice := h.newAgent(t, "alice")
	bob := h.newAgent(t, "bob")
	if code, body, _ := h.do(t, "POST", "/v1/reservations", alice, `{"paths":["**"]}`); code != 403 || !strings.Contains(body, "hubctl reservations reserve") {
		t.Errorf("agent reserves ** = %d %s, want 403 naming hubctl reservations reserve", code, body)
	}
	if code, body, _ := h.do(t, "POST", "/v1/admin/reservations", alice, `{"agent":"alice","paths":["**"]}`); code != 403 {
		t.Errorf("agent token on the admin's route = %d %s, want 403", code, body)
	}
	code, body, v := h.do(t, "POST", "/v1/admin/reservations", h.token, `{"agent":"alice","paths":["**"],"reason":"release freeze"}`)
	if rs, _ := v["reservations"].([]any); code != 200 || len(rs) != 1 {
		t.Fatalf("admin reserves ** for alice = %d %s", code, body)
	}
	if code, body, _ := h.do(t, "POST", "/v1/reservations", bob, `{"paths":["src/a.go"]}`); code != 400 || !strings.Contains(body, "alice") {
		t.Errorf("bob's exclusive under alice's ** = %d %s, want 400 naming alice", code, body)
	}
}
