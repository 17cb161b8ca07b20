package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestInboxCommands(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	ann, _, err := h.m.Services.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	in := h.m.Services.Inbox
	_, err = in.AskHuman(ctx, ann, hub.QuestionRequest{Question: "Which DB?", Options: []string{"Postgres", "SQLite"}, Urgency: "urgent", TimeoutSeconds: new(int32)})
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan *hub.ApprovalResult, 1)
	go func() {
		r, _ := in.RequestApproval(ctx, ann, hub.ApprovalRequest{Tool: "Bash", Input: `{"command":"npm test"}`, Wait: 20 * time.Second})
		asked <- r
	}()
	var list string
	for i := 0; i < 500 && !strings.Contains(list, "approval"); i++ {
		list = h.hubctl(t, nil, "inbox").must(t).stdout
		time.Sleep(10 * time.Millisecond)
	}
	// Open items first, the urgent question before the approval.
	if !regexp.MustCompile(`(?s)1\s+question \(urgent\)\s+ann\s+default\s+Which DB\? \[Postgres / SQLite\].*\n2\s+approval\s+ann\s+default\s+Allow Bash\(npm test\)\?`).MatchString(list) {
		t.Fatalf("inbox:\n%s", list)
	}
	out := h.hubctl(t, nil, "inbox", "answer", "2", "allow", "--remember", "agent").must(t).stdout
	if !strings.Contains(out, "allowed ann's Allow Bash(npm test)? (item 2) as operator") || !strings.Contains(out, "remembered for the agent, covering this exact call") {
		t.Errorf("answer printed %q", out)
	}
	if r := <-asked; r == nil || r.Item.Decision != "allow" {
		t.Fatalf("the parked request got %+v", r)
	}
	if rules := h.hubctl(t, nil, "inbox", "rules").must(t).stdout; !regexp.MustCompile(`(?m)^1\s+default\s+ann\s+Bash\s+exactly \{"command":"npm test"\}\s+operator\s+.*live$`).MatchString(rules) {
		t.Errorf("rules:\n%s", rules)
	}
	// A person answers with their own token, in their own name.
	add := h.hubctl(t, nil, "people", "add", "pat").must(t).stdout
	tok := regexp.MustCompile(`(?m)^  (ahp_\S+)$`).FindStringSubmatch(add)
	if tok == nil {
		t.Fatalf("people add printed:\n%s", add)
	}
	pat := map[string]string{"HUB_ADMIN_TOKEN": tok[1]}
	out = h.hubctl(t, pat, "inbox", "answer", "1", "Use", "Postgres").must(t).stdout
	if !strings.Contains(out, "answered item 1 as pat") {
		t.Errorf("pat's answer printed %q", out)
	}
	if msgs := h.hubctl(t, nil, "inbox", "--state", "answered").must(t).stdout; !strings.Contains(msgs, "answered by pat: Use Postgres") {
		t.Errorf("answered items:\n%s", msgs)
	}
	// A person administers nothing.
	if r := h.hubctl(t, pat, "people", "list"); r.code != 1 || !strings.Contains(r.stderr, "a person token was given") {
		t.Errorf("people list with pat's token: exit %d, stderr %q", r.code, r.stderr)
	}
	// Answers that do not fit are refused with what to do.
	if r := h.hubctl(t, nil, "inbox", "answer", "1", "again"); r.code != 1 || !strings.Contains(r.stderr, "only an open item can be answered") {
		t.Errorf("a second answer: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := h.hubctl(t, nil, "inbox", "answer", "x", "allow"); r.code != 2 {
		t.Errorf("answer x: exit %d, want 2 (usage)", r.code)
	}
	if out := h.hubctl(t, nil, "inbox", "rules", "revoke", "1").must(t).stdout; !strings.Contains(out, "revoked rule 1") {
		t.Errorf("revoke printed %q", out)
	}
	if rules := h.hubctl(t, nil, "inbox", "rules").must(t).stdout; !strings.Contains(rules, "no remembered allows") {
		t.Errorf("rules after the revocation:\n%s", rules)
	}
}

func TestWebhookCommands(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	out := h.hubctl(t, nil, "webhooks", "add", "http://127.0.0.1:9/hook", "--kind", "approval", "--project", "default").must(t).stdout
	if !strings.Contains(out, "added webhook 1: http://127.0.0.1:9/hook (kinds approval, projects default)") || !regexp.MustCompile(`Secret \(shown once\): whs_\S+`).MatchString(out) {
		t.Errorf("add printed:\n%s", out)
	}
	if list := h.hubctl(t, nil, "webhooks", "list").must(t).stdout; !regexp.MustCompile(`(?m)^1\s+http://127.0.0.1:9/hook\s+approval\s+default`).MatchString(list) || strings.Contains(list, "whs_") {
		t.Errorf("list (no secret shown):\n%s", list)
	}
	if r := h.hubctl(t, nil, "webhooks", "add", "ftp://example.com/x"); r.code != 1 || !strings.Contains(r.stderr, "not an http(s) URL") {
		t.Errorf("add ftp: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := h.hubctl(t, nil, "webhooks", "add", "http://127.0.0.1:9/x", "--kind", "everything"); r.code != 1 || !strings.Contains(r.stderr, "not an inbox kind") {
		t.Errorf("add --kind everything: exit %d, stderr %q", r.code, r.stderr)
	}
	h.hubctl(t, nil, "webhooks", "log").must(t)
	if out := h.hubctl(t, nil, "webhooks", "rm", "1").must(t).stdout; !strings.Contains(out, "removed webhook 1") {
		t.Errorf("rm printed %q", out)
	}
	if r := h.hubctl(t, nil, "webhooks", "rm", "1"); r.code != 1 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("rm again: exit %d, stderr %q", r.code, r.stderr)
	}
}
