package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestJoinCodeState(t *testing.T) {
	t.Parallel()
	t0 := coreT0
	base := hub.JoinCode{ID: 7, MaxUses: 2, Uses: 1, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	tests := []struct {
		name     string
		edit     func(*hub.JoinCode)
		at       time.Time
		want     hub.JoinCodeState
		code     string
		contains string
	}{
		{"active", func(*hub.JoinCode) {}, t0, hub.JoinCodeActive, "", ""},
		{"expired at its expiry", func(*hub.JoinCode) {}, t0.Add(time.Hour), hub.JoinCodeExpired, hub.EPRECONDITION, "expired at 2026-01-02T04:04:05Z"},
		{"used up", func(c *hub.JoinCode) { c.Uses = 2 }, t0, hub.JoinCodeUsedUp, hub.EPRECONDITION, "used up: all 2 of its uses"},
		{"revoked", func(c *hub.JoinCode) { c.RevokedAt = t0 }, t0, hub.JoinCodeRevoked, hub.EPERMISSION, "was revoked at"},
		{"revoked wins over expired", func(c *hub.JoinCode) { c.RevokedAt = t0 }, t0.Add(2 * time.Hour), hub.JoinCodeRevoked, hub.EPERMISSION, "revoked"},
		{"expired wins over used up", func(c *hub.JoinCode) { c.Uses = 2 }, t0.Add(2 * time.Hour), hub.JoinCodeExpired, hub.EPRECONDITION, "expired"},
	}
	for _, tt := range tests {
		c := base
		tt.edit(&c)
		if got := c.State(tt.at); got != tt.want {
			t.Errorf("%s: State = %s, want %s", tt.name, got, tt.want)
		}
		err := c.Refusal(tt.at)
		if hub.ErrorCode(err) != tt.code || !strings.Contains(hub.ErrorMessage(err), tt.contains) {
			t.Errorf("%s: Refusal = %v (%s), want code %q containing %q", tt.name, err, hub.ErrorCode(err), tt.code, tt.contains)
		}
	}
}

func TestLooksLikeJoinCode(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	_, code, err := h.CreateJoinCode(context.Background(), hub.CreateJoinCodeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{code: true, "": false, code[:len(code)-1]: false, "ahk_" + code[4:]: false, code + "x": false} {
		if got := hub.LooksLikeJoinCode(s); got != want {
			t.Errorf("LooksLikeJoinCode(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCreateJoinCodeValidates(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	for _, req := range []hub.CreateJoinCodeRequest{
		{ExpiresIn: 30 * time.Second},
		{ExpiresIn: hub.JoinCodeMaxExpiry + time.Second},
		{MaxUses: -1},
		{MaxUses: hub.JoinCodeMaxUses + 1},
		{Role: strings.Repeat("r", 201)},
		{Note: "\xff"},
	} {
		if _, _, err := h.CreateJoinCode(ctx, req); hub.ErrorCode(err) != hub.EINVALID {
			t.Errorf("CreateJoinCode(%+v) = %v, want EINVALID", req, err)
		}
	}
	if cs, _ := h.ListJoinCodes(ctx); len(cs) != 0 {
		t.Errorf("refused requests stored %d codes", len(cs))
	}
	c, code, err := h.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxUses != 1 || !c.ExpiresAt.Equal(coreT0.Add(24*time.Hour)) || !hub.LooksLikeJoinCode(code) {
		t.Errorf("defaults: %+v, code %q; want 1 use, 24h, a join code", c, code)
	}
}

// TestJoin registers agents with a code and is refused, with its reason,
// for each way a code stops working; no refusal uses the code or writes an
// agent.
func TestJoin(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	h.agent(t, "taken")
	c, code, err := h.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{Role: "reviewer", MaxUses: 2, ExpiresIn: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	join := func(code, name string) (*hub.Agent, string, error) {
		return h.Join(ctx, hub.JoinRequest{Code: code, Name: name, Description: "joined"})
	}

	a, token, err := join(code, "first")
	if err != nil {
		t.Fatal(err)
	}
	if a.Role != "reviewer" || a.Description != "joined" {
		t.Errorf("joined agent %+v, want role reviewer from the code", a)
	}
	if got := h.auth(t, token); got.Name != "first" {
		t.Errorf("the token authenticates %q, want first", got.Name)
	}
	evs, err := h.ListEvents(ctx, hub.ListEventsRequest{Agent: "first", Kind: string(hub.EventJoined)})
	if err != nil || len(evs) != 1 || !strings.Contains(evs[0].Detail, "join code 1 (use 1 of 2)") {
		t.Errorf("joined events = %+v, %v; want one naming the code and the use", evs, err)
	}

	refused := func(what, code, name, wantCode, wantMsg string) {
		t.Helper()
		_, _, err := join(code, name)
		if hub.ErrorCode(err) != wantCode || !strings.Contains(hub.ErrorMessage(err), wantMsg) {
			t.Errorf("%s: %v (%s), want %s containing %q", what, err, hub.ErrorCode(err), wantCode, wantMsg)
		}
	}
	refused("name taken", code, "taken", hub.ECONFLICT, `name "taken" is unavailable: choose another name`)
	refused("reserved name", code, "operator", hub.ECONFLICT, `name "operator" is unavailable: choose another name`)
	// A name of another project gets the same answer, word for word: a
	// join code does not tell who else is on the hub.
	if _, err := h.CreateProject(ctx, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "hidden", Project: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	refused("name of another project", code, "hidden", hub.ECONFLICT, `name "hidden" is unavailable: choose another name`)
	refused("bad name", code, "Bad Name", hub.EINVALID, "agent name")
	refused("unknown code", "ahj_"+strings.Repeat("A", 32), "x", hub.EUNAUTHORIZED, "unknown join code")
	refused("not a code", "ahk_token", "x", hub.EUNAUTHORIZED, "unknown join code")
	if err := h.CheckJoinCode(ctx, code); err != nil {
		t.Errorf("CheckJoinCode with one use left: %v", err)
	}
	if _, _, err := join(code, "second"); err != nil {
		t.Fatal(err)
	}
	refused("over-used", code, "third", hub.EPRECONDITION, "used up: all 2 of its uses")
	if err := h.CheckJoinCode(ctx, code); hub.ErrorCode(err) != hub.EPRECONDITION {
		t.Errorf("CheckJoinCode used up = %v, want EPRECONDITION", err)
	}

	_, expiring, err := h.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{ExpiresIn: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	revoked, revokedCode, err := h.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{MaxUses: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := h.RevokeJoinCode(ctx, revoked.ID); err != nil || r.RevokedAt.IsZero() {
		t.Fatalf("RevokeJoinCode = %+v, %v", r, err)
	}
	refused("revoked", revokedCode, "fourth", hub.EPERMISSION, "revoked")
	h.Clock.Advance(time.Minute)
	refused("expired", expiring, "fifth", hub.EPRECONDITION, "expired at")
	if _, err := h.RevokeJoinCode(ctx, 99); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("RevokeJoinCode(99) = %v, want ENOTFOUND", err)
	}

	got, err := h.ListJoinCodes(ctx)
	if err != nil || len(got) != 3 || got[2].ID != c.ID || got[2].Uses != 2 || got[0].Uses != 0 {
		t.Errorf("ListJoinCodes = %+v, %v; want 3 codes, the first used twice, the revoked one unused", got, err)
	}
	as, _ := h.ListAgents(ctx, true)
	if len(as) != 4 {
		t.Errorf("%d agents, want taken, hidden, first and second", len(as))
	}
	hubEvents, err := h.ListEvents(ctx, hub.ListEventsRequest{Kind: string(hub.EventJoinCodeRevoked)})
	if err != nil || len(hubEvents) != 1 {
		t.Errorf("revoked events = %+v, %v; want one", hubEvents, err)
	}
}
