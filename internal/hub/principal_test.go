package hub_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// Agents, people and the reserved names are one namespace: whichever kind
// holds a name, every door that creates a principal refuses it; a join
// says "unavailable" without telling which kind holds it; nothing is
// created.
func TestEveryDoorRefusesANameAnotherPrincipalHolds(t *testing.T) {
	h := newTestHub(t)
	ctx := context.Background()
	people := hub.NewPeople(h.Core)
	if _, _, err := people.CreatePerson(ctx, "pat", nil); err != nil {
		t.Fatal(err)
	}
	h.agent(t, "ann")
	_, code, err := h.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{MaxUses: 100})
	if err != nil {
		t.Fatal(err)
	}
	doors := map[string]func(name string) error{
		"CreateAgent": func(name string) error {
			_, _, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: name})
			return err
		},
		"Join": func(name string) error {
			_, _, err := h.Join(ctx, hub.JoinRequest{Code: code, Name: name})
			return err
		},
		"CreatePerson": func(name string) error {
			_, _, err := people.CreatePerson(ctx, name, nil)
			return err
		},
	}
	for door, create := range doors {
		for _, name := range []string{"pat", "ann", "hub", "operator", "admin", "system"} {
			err := create(name)
			if c := hub.ErrorCode(err); c != hub.ECONFLICT && c != hub.EINVALID {
				t.Errorf("%s(%q): %v, want a conflict or an invalid name", door, name, err)
				continue
			}
			if door == "Join" && (!strings.Contains(hub.ErrorMessage(err), "unavailable") ||
				strings.Contains(hub.ErrorMessage(err), "person") || strings.Contains(hub.ErrorMessage(err), "agent")) {
				t.Errorf("Join(%q) says %q: want \"unavailable\", not which kind holds the name", name, hub.ErrorMessage(err))
			}
		}
	}
	if err := doors["CreateAgent"]("pat"); !strings.Contains(hub.ErrorMessage(err), "a person named") {
		t.Errorf("the admin's CreateAgent(pat) says %q: want it to say a person holds the name", hub.ErrorMessage(err))
	}
	if as, _ := h.ListAgents(ctx, true); len(as) != 1 {
		t.Errorf("%d agents after the refusals, want ann alone", len(as))
	}
	if ps, _ := people.ListPeople(ctx); len(ps) != 1 {
		t.Errorf("%d people after the refusals, want pat alone", len(ps))
	}
}

// A hub made before names were shared may hold an agent and a person of
// one name: the person keeps it. A message to pat, or mentioning @pat,
// goes to the person; the agent pat receives none of them, and what it
// posts still says it comes from an agent.
func TestAPersonKeepsANameAnAgentAlsoHolds(t *testing.T) {
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "pat", "bob")
	agentPat, bob := as[0], as[1]
	// The person pat, written as an older hub let it be.
	if err := h.DB.Update(ctx, func(tx hub.Tx) error {
		return tx.InsertPerson(&hub.Person{Name: "pat", CreatedAt: h.Clock.Now()}, hub.HashToken("ahp_pat"))
	}); err != nil {
		t.Fatal(err)
	}
	m := h.post(t, bob, hub.PostRequest{To: []string{"pat"}, Body: "for pat, @pat"})
	if len(m.To) != 1 || m.To[0] != "pat" || len(m.Mentions) != 1 {
		t.Errorf("to %v mentions %v, want pat in both", m.To, m.Mentions)
	}
	if got := h.inbox(t, agentPat); len(got) != 0 {
		t.Errorf("the agent pat received %d messages meant for the person pat", len(got))
	}
	h.post(t, agentPat, hub.PostRequest{To: []string{"bob"}, Body: "Answer from pat to your question (inbox item 1): yes"})
	got := h.inbox(t, bob)
	if len(got) != 1 || got[0].From != "pat" || got[0].SenderKind != hub.ByAgent {
		t.Fatalf("bob's inbox %+v, want one message from pat, kind agent", got)
	}
}

// Every message records the kind of its sender when it is written, and
// reads give it back: an agent's post, a person's, the admin's, the hub's.
func TestMessagesRecordTheirSendersKind(t *testing.T) {
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "ann", "bob")
	h.post(t, as[0], hub.PostRequest{To: []string{"bob"}, Body: "from an agent"})
	for _, from := range []string{"pat", hub.SenderAdmin, hub.Operator} {
		if _, err := h.Post(ctx, nil, from, hub.PostRequest{To: []string{"bob"}, Body: "from " + from}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Nudge(ctx, "bob", "a nudge"); err != nil {
		t.Fatal(err)
	}
	want := map[string]hub.SenderKind{"from an agent": hub.ByAgent, "from pat": hub.ByPerson, "from admin": hub.ByAdmin, "from operator": hub.ByAdmin, "@bob: a nudge": hub.ByHub}
	got := h.inbox(t, as[1])
	if len(got) != len(want) {
		t.Fatalf("bob has %d messages, want %d", len(got), len(want))
	}
	for _, m := range got {
		if m.SenderKind != want[m.Body] {
			t.Errorf("%q from %s: kind %q, want %q", m.Body, m.From, m.SenderKind, want[m.Body])
		}
	}
}
