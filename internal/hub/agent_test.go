package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestValidateAgentName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"7", true},
		{"alice", true},
		{"claude-code.2_b", true},
		{"0abc", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"Alice", false},
		{"-alice", false},
		{".alice", false},
		{"_alice", false},
		{"al ice", false},
		{"alice ", false},
		{"al/ice", false},
		{"al@ice", false},
		{"#alice", false},
		{"@alice", false},
		{"élise", false},
		{"alice\n", false},
		{"admin", false},
		{"orchestrator", false},
		{"admin2", true},
	}
	for _, tt := range tests {
		err := hub.ValidateAgentName(tt.name)
		if tt.ok && err != nil {
			t.Errorf("ValidateAgentName(%q) = %v, want nil", tt.name, err)
		}
		if !tt.ok {
			if got := hub.ErrorCode(err); got != hub.EINVALID {
				t.Errorf("ValidateAgentName(%q): code %q (%v), want %q", tt.name, got, err, hub.EINVALID)
			} else if !strings.Contains(err.Error(), "agent name") {
				t.Errorf("ValidateAgentName(%q) = %q, want a message about the agent name", tt.name, err)
			}
		}
	}
}

func TestCreateAgent(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	a, token, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "alice", DisplayName: "Alice", Role: "reviewer", Description: "reads diffs", Locale: "ja"})
	if err != nil {
		t.Fatalf("CreateAgent: %v", err)
	}
	if a.ID == 0 || a.Name != "alice" || a.DisplayName != "Alice" || a.Role != "reviewer" || a.Description != "reads diffs" || a.Locale != "ja" {
		t.Errorf("agent = %+v", a)
	}
	if !a.CreatedAt.Equal(coreT0) || a.Disabled() {
		t.Errorf("created %v disabled %v, want %v and enabled", a.CreatedAt, a.Disabled(), coreT0)
	}
	if got, want := a.CurrentHeartbeatID, "20260102030405"; got != want {
		t.Errorf("CurrentHeartbeatID = %q, want %q (set on registration)", got, want)
	}
	if !strings.HasPrefix(token, "ahk_") || len(token) < 40 {
		t.Errorf("token = %q, want a long ahk_ token", token)
	}
	got, err := h.Agent(ctx, "alice")
	if err != nil || got.ID != a.ID {
		t.Errorf("Agent(alice) = %+v, %v; want ID %d", got, err, a.ID)
	}

	tests := []struct {
		name string
		req  hub.CreateAgentRequest
		want string
	}{
		{"duplicate", hub.CreateAgentRequest{Name: "alice"}, hub.ECONFLICT},
		{"bad name", hub.CreateAgentRequest{Name: "Bob"}, hub.EINVALID},
		{"reserved name", hub.CreateAgentRequest{Name: "admin"}, hub.EINVALID},
		{"display name not UTF-8", hub.CreateAgentRequest{Name: "bob", DisplayName: "\xff"}, hub.EINVALID},
		{"role too long", hub.CreateAgentRequest{Name: "bob", Role: strings.Repeat("r", 201)}, hub.EINVALID},
		{"description too long", hub.CreateAgentRequest{Name: "bob", Description: strings.Repeat("d", 4001)}, hub.EINVALID},
		{"unknown locale", hub.CreateAgentRequest{Name: "bob", Locale: "xx"}, hub.EINVALID},
	}
	for _, tt := range tests {
		_, _, err := h.CreateAgent(ctx, tt.req)
		wantCode(t, tt.name, err, tt.want)
	}
	as, err := h.ListAgents(ctx, true)
	if err != nil || len(as) != 1 {
		t.Errorf("agents after the bad requests = %d (%v), want 1", len(as), err)
	}
	_, err = h.Agent(ctx, "bob")
	wantCode(t, "Agent(bob)", err, hub.ENOTFOUND)
	_, err = h.Agent(ctx, "Bob")
	wantCode(t, "Agent(Bob)", err, hub.EINVALID)
}

func TestUpdateAgent(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	if _, _, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "alice", DisplayName: "Alice", Role: "dev"}); err != nil {
		t.Fatal(err)
	}
	role := "reviewer"
	a, err := h.UpdateAgent(ctx, hub.UpdateAgentRequest{Name: "alice", Role: &role})
	if err != nil {
		t.Fatalf("UpdateAgent: %v", err)
	}
	if a.Role != "reviewer" || a.DisplayName != "Alice" {
		t.Errorf("after changing the role: %+v, want role reviewer and display name kept", a)
	}
	_, err = h.UpdateAgent(ctx, hub.UpdateAgentRequest{Name: "nobody", Role: &role})
	wantCode(t, "UpdateAgent(nobody)", err, hub.ENOTFOUND)
	bad := "\xff"
	_, err = h.UpdateAgent(ctx, hub.UpdateAgentRequest{Name: "alice", Description: &bad})
	wantCode(t, "UpdateAgent(invalid UTF-8)", err, hub.EINVALID)
}

// Tokens: what Authenticate answers after each token operation.
func TestAuthenticate(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	alice, token := h.agent(t, "alice")

	check := func(step, token string, want string) {
		t.Helper()
		a, err := h.Authenticate(ctx, token)
		if got := hub.ErrorCode(err); got != want {
			t.Errorf("%s: Authenticate code %q (%v), want %q", step, got, err, want)
		}
		if want == "" && (a == nil || a.ID != alice.ID) {
			t.Errorf("%s: Authenticate = %+v, want alice", step, a)
		}
	}
	check("fresh token", token, "")
	check("token with spaces", " "+token+"\n", "")
	check("no token", "", hub.EUNAUTHORIZED)
	check("garbage", "ahk_nope", hub.EUNAUTHORIZED)
	check("admin token", "admin-secret", hub.EUNAUTHORIZED)

	_, rotated, err := h.RotateToken(ctx, "alice", false)
	if err != nil {
		t.Fatalf("RotateToken: %v", err)
	}
	if rotated == "" || rotated == token {
		t.Fatalf("rotated token = %q, want a new one", rotated)
	}
	check("old token after rotation", token, hub.EUNAUTHORIZED)
	check("rotated token", rotated, "")

	if _, err := h.SetAgentDisabled(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	check("disabled", rotated, hub.EPERMISSION)
	if _, err := h.SetAgentDisabled(ctx, "alice", false); err != nil {
		t.Fatal(err)
	}
	check("enabled again", rotated, "")

	_, none, err := h.RotateToken(ctx, "alice", true)
	if err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if none != "" {
		t.Errorf("revoke returned token %q, want none", none)
	}
	check("revoked", rotated, hub.EUNAUTHORIZED)

	for _, name := range []string{"nobody", "Bad"} {
		_, _, err := h.RotateToken(ctx, name, false)
		want := hub.ENOTFOUND
		if name == "Bad" {
			want = hub.EINVALID
		}
		wantCode(t, "RotateToken("+name+")", err, want)
		_, err = h.SetAgentDisabled(ctx, name, true)
		wantCode(t, "SetAgentDisabled("+name+")", err, want)
	}

	if !h.IsAdminToken("admin-secret") || h.IsAdminToken(token) || h.IsAdminToken("") {
		t.Error("IsAdminToken accepts the wrong tokens")
	}
}

// Disabling keeps the time of the first disable; the agent still lists
// with include_disabled.
func TestSetAgentDisabled(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	h.agents(t, "alice", "bob")
	a, err := h.SetAgentDisabled(ctx, "alice", true)
	if err != nil || !a.DisabledAt.Equal(coreT0) {
		t.Fatalf("disable = %+v, %v; want disabled at %v", a, err, coreT0)
	}
	h.Clock.Advance(time.Hour)
	if a, _ = h.SetAgentDisabled(ctx, "alice", true); !a.DisabledAt.Equal(coreT0) {
		t.Errorf("disabling twice moved DisabledAt to %v, want %v", a.DisabledAt, coreT0)
	}
	enabled, _ := h.ListAgents(ctx, false)
	all, _ := h.ListAgents(ctx, true)
	if len(enabled) != 1 || enabled[0].Name != "bob" || len(all) != 2 {
		t.Errorf("ListAgents: enabled %d, all %d; want [bob] and 2", len(enabled), len(all))
	}
}

// The agent an authentication returns carries its previous call, so that
// since_last measures the gap before this call.
func TestAuthenticateCarriesPreviousCall(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	_, token := h.agent(t, "alice") // first call, at coreT0
	h.Clock.Advance(3 * time.Minute)
	ctx := context.Background()
	if _, _, err := h.AdvanceBeat(ctx, h.Clock.Now().Add(-7*time.Minute), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, n, err := h.AdvanceBeat(ctx, h.Clock.Now(), time.Minute); err != nil || n != 7 {
		t.Fatalf("AdvanceBeat = %d beats, %v; want 7", n, err)
	}
	a := h.auth(t, token)
	if !a.LastSeenAt.Equal(coreT0) {
		t.Errorf("LastSeenAt = %v, want the previous call at %v", a.LastSeenAt, coreT0)
	}
	h.Clock.Advance(time.Minute)
	a = h.auth(t, token)
	if want := coreT0.Add(3 * time.Minute); !a.LastSeenAt.Equal(want) || a.LastInteractionBeat != 7 {
		t.Errorf("LastSeenAt, beat = %v, %d; want %v, 7", a.LastSeenAt, a.LastInteractionBeat, want)
	}
	if n, err := h.FlushPresence(ctx, h.Clock.Now(), hub.DefaultScheduleSettings()); err != nil || n != 1 {
		t.Fatalf("FlushPresence = %d, %v; want 1 agent", n, err)
	}
	stored, err := h.Agent(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if want := coreT0.Add(4 * time.Minute); !stored.LastSeenAt.Equal(want) || stored.LastInteractionBeat != 7 {
		t.Errorf("stored LastSeenAt, beat = %v, %d; want alice's last call at %v, 7", stored.LastSeenAt, stored.LastInteractionBeat, want)
	}
}
