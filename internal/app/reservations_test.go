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
