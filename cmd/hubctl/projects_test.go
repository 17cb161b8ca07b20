package main

import (
	"strings"
	"testing"
)

// hubctl projects: create, link, list; agents put in a project and listed
// by it; messages and reservations filtered by it.
func TestProjectsCommands(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	h.hubctl(t, nil, "projects", "create", "red").must(t)
	h.hubctl(t, nil, "projects", "create", "blue").must(t)
	if dup := h.hubctl(t, nil, "projects", "create", "red"); dup.code != 1 || !strings.Contains(dup.stderr, "red") {
		t.Errorf("creating red twice: exit %d, stderr %q", dup.code, dup.stderr)
	}
	if bad := h.hubctl(t, nil, "projects", "link", "red"); bad.code != 2 {
		t.Errorf("projects link with one project: exit %d, want 2 (usage)", bad.code)
	}
	h.hubctl(t, nil, "projects", "link", "red", "blue").must(t)
	h.addAgent(t, "r1", "--project", "red")
	h.addAgent(t, "b1", "--project", "blue")
	h.addAgent(t, "d1")
	if r := h.hubctl(t, nil, "agent", "add", "x1", "--project", "nowhere"); r.code != 1 || !strings.Contains(r.stderr, "nowhere") {
		t.Errorf("agent add in a missing project: exit %d, stderr %q", r.code, r.stderr)
	}

	list := h.hubctl(t, nil, "projects").must(t).stdout
	for _, want := range []string{"blue", "red", "default"} {
		if !strings.Contains(list, want) {
			t.Errorf("projects lacks %s:\n%s", want, list)
		}
	}
	lines := strings.Split(list, "\n")
	for _, l := range lines {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "red" && (f[1] != "1" || f[2] != "blue") {
			t.Errorf("red's row = %q, want 1 agent, linked to blue", l)
		}
	}
	agents := h.hubctl(t, nil, "agent", "list", "--project", "red").must(t).stdout
	if !strings.Contains(agents, "r1") || strings.Contains(agents, "b1") || strings.Contains(agents, "d1") {
		t.Errorf("agent list --project red:\n%s", agents)
	}
	h.hubctl(t, nil, "send", "--to", "blue/#ops", "--project", "red", "for blue's ops").must(t) // qualified wins
	msgs := h.hubctl(t, nil, "messages", "--project", "blue").must(t).stdout
	if !strings.Contains(msgs, "for blue's ops") {
		t.Errorf("messages --project blue lacks the post to blue/#ops:\n%s", msgs)
	}
	if red := h.hubctl(t, nil, "messages", "--project", "red").must(t).stdout; strings.Contains(red, "for blue's ops") {
		t.Errorf("messages --project red shows blue's message:\n%s", red)
	}
	h.hubctl(t, nil, "cron", "add", "standup", "--every", "1h", "--to", "#daily", "--message", "standup", "--project", "blue").must(t)
	if red := h.hubctl(t, nil, "cron", "list", "--project", "red").must(t).stdout; strings.Contains(red, "standup") {
		t.Errorf("cron list --project red shows blue's job:\n%s", red)
	}
	if blue := h.hubctl(t, nil, "cron", "list", "--project", "blue").must(t).stdout; !strings.Contains(blue, "standup") {
		t.Errorf("cron list --project blue lacks its job:\n%s", blue)
	}
	h.hubctl(t, nil, "projects", "unlink", "blue", "red").must(t)
	if again := h.hubctl(t, nil, "projects", "unlink", "blue", "red"); again.code != 1 {
		t.Errorf("unlinking twice: exit %d, want 1", again.code)
	}
}
