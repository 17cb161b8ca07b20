package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/metadata"
)

func TestJoinCodes(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	out := h.hubctl(t, nil, "join-codes", "create", "--expires", "2h", "--max-uses", "3", "--role", "reviewer", "--note", "ci fleet").must(t).stdout
	code := regexp.MustCompile(`(?m)^  (ahj_\S+)$`).FindStringSubmatch(out)
	if code == nil || !strings.Contains(out, "Created join code 1: 3 uses, role reviewer") ||
		!strings.Contains(out, "hub mcp --addr "+h.addr+" --join "+code[1]+" --name NAME") {
		t.Fatalf("create printed:\n%s", out)
	}
	// A hub without its own CA (on loopback): the setup line has no fingerprint.
	if want := "\n  hub setup claude --addr " + h.addr + " --join " + code[1] + "\n"; !strings.Contains(out, want) {
		t.Errorf("create printed:\n%s\nwant the line %q", out, want)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+code[1])
	if _, err := hubv1.NewAgentServiceClient(h.m.Conn()).JoinHub(ctx, &hubv1.JoinHubRequest{Name: "joiner"}); err != nil {
		t.Fatalf("join with the printed code: %v", err)
	}
	list := h.hubctl(t, nil, "join-codes", "list").must(t).stdout
	if !regexp.MustCompile(`(?m)^1\s+active\s+1/3\s+reviewer\s.*ci fleet$`).MatchString(list) {
		t.Errorf("list:\n%s", list)
	}
	if strings.Contains(list, code[1]) {
		t.Errorf("list shows the code itself:\n%s", list)
	}
	rev := h.hubctl(t, nil, "join-codes", "revoke", "1").must(t).stdout
	if !strings.Contains(rev, "revoked join code 1 (1 of 3 uses taken)") {
		t.Errorf("revoke printed %q", rev)
	}
	if js := h.hubctl(t, nil, "join-codes", "list", "-o", "json").must(t).stdout; !strings.Contains(js, `"state": "revoked"`) {
		t.Errorf("list -o json after revoke:\n%s", js)
	}
	if r := h.hubctl(t, nil, "join-codes", "revoke", "x1"); r.code != 2 {
		t.Errorf("revoke x1: exit %d, want 2 (usage)", r.code)
	}
	if r := h.hubctl(t, nil, "join-codes", "revoke", "9"); r.code != 1 || !strings.Contains(r.stderr, "join code 9 does not exist") {
		t.Errorf("revoke 9: exit %d, stderr %q", r.code, r.stderr)
	}
	other := h.hubctl(t, nil, "join-codes", "create", "--hub-addr", "hub.example:7700").must(t).stdout
	if !strings.Contains(other, "hub setup claude --addr hub.example:7700 --join ahj_") || !strings.Contains(other, "hub mcp --addr hub.example:7700 --join") {
		t.Errorf("create --hub-addr printed:\n%s", other)
	}
	if r := h.hubctl(t, nil, "join-codes", "create", "--hub-addr", "hub.example"); r.code != 2 || !strings.Contains(r.stderr, "HOST:PORT") {
		t.Errorf("create --hub-addr without a port: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := h.hubctl(t, nil, "join-codes", "create", "--max-uses", "0", "--expires", "10s"); r.code != 1 || !strings.Contains(r.stderr, "out of range") {
		t.Errorf("create --expires 10s: exit %d, stderr %q", r.code, r.stderr)
	}
}
