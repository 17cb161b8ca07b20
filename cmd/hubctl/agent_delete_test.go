package main

import (
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// TestAgentDelete: `agent delete NAME` refuses without --yes (saying so)
// and for an enabled agent (naming `agent disable`), deleting nothing;
// after `agent disable` it deletes the agent with the messages it sent,
// the timeline shows an agent_deleted event, and `agent add` registers the
// name again.
func TestAgentDelete(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	bobTok := h.addAgent(t, "bob")
	h.addAgent(t, "carol")
	agent, bob := h.agentClient(t, bobTok)
	if _, err := agent.PostMessage(bob, &hubv1.PostMessageRequest{To: []string{"carol"}, Body: "bob was here"}); err != nil {
		t.Fatal(err)
	}

	if r := h.hubctl(t, nil, "agent", "delete", "bob"); r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("delete without --yes: exit %d, stderr %q; want a usage error naming --yes", r.code, r.stderr)
	}
	if r := h.hubctl(t, nil, "agent", "delete", "bob", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "hubctl agent disable bob") {
		t.Errorf("delete of an enabled agent: exit %d, stderr %q; want it refused naming `hubctl agent disable bob`", r.code, r.stderr)
	}
	if s := h.hubctl(t, nil, "messages").must(t).stdout; !strings.Contains(s, "bob was here") {
		t.Fatalf("bob's message is gone after the refusals:\n%s", s)
	}

	h.hubctl(t, nil, "agent", "disable", "bob").must(t)
	out := h.hubctl(t, nil, "agent", "delete", "bob", "--yes").must(t).stdout
	if !strings.Contains(out, "Deleted agent bob with 1 messages") {
		t.Errorf("agent delete said %q", out)
	}
	if s := h.hubctl(t, nil, "messages").must(t).stdout; strings.Contains(s, "bob was here") {
		t.Errorf("bob's message is still listed:\n%s", s)
	}
	if r := h.hubctl(t, nil, "agent", "show", "bob"); r.code != 1 {
		t.Errorf("agent show bob after the deletion: exit %d", r.code)
	}
	if s := h.hubctl(t, nil, "events", "--kind", "agent_deleted").must(t).stdout; !strings.Contains(s, `"bob"`) {
		t.Errorf("events --kind agent_deleted:\n%s", s)
	}
	h.addAgent(t, "bob")
}
