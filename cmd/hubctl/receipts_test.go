package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// TestPriorityAckAndShow: `messages post --priority urgent --ack` posts an
// urgent message asking for acknowledgements; `messages show ID` lists each
// recipient with its state, delivered, in context, read and acknowledged,
// and follows bob's acknowledgement; a bad priority is a usage error naming the choices.
func TestPriorityAckAndShow(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	bobTok := h.addAgent(t, "bob")
	h.addAgent(t, "carol")
	r := h.hubctl(t, nil, "messages", "post", "--to", "bob,carol", "--priority", "urgent", "--ack", "-o", "json", "freeze", "main").must(t)
	var sent struct {
		Message struct {
			ID          string `json:"id"`
			Priority    string `json:"priority"`
			AckRequired bool   `json:"ack_required"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sent); err != nil || sent.Message.Priority != "PRIORITY_URGENT" || !sent.Message.AckRequired {
		t.Fatalf("messages post -o json = %s (%v): want urgent, ack required", r.stdout, err)
	}
	id := sent.Message.ID

	agent, bob := h.agentClient(t, bobTok)
	if _, err := agent.AcknowledgeMessage(bob, &hubv1.AcknowledgeMessageRequest{Ids: []string{id}}); err != nil {
		t.Fatal(err)
	}

	show := h.hubctl(t, nil, "messages", "show", id).must(t)
	for _, want := range []string{"Priority:", "urgent", "Acknowledgement:", "required", "RECIPIENT", "STATE", "IN CONTEXT", "ACKNOWLEDGED"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("messages show lacks %q:\n%s", want, show.stdout)
		}
	}
	var bobLine, carolLine string
	for _, l := range strings.Split(show.stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "bob "):
			bobLine = l
		case strings.HasPrefix(l, "carol "):
			carolLine = l
		}
	}
	// bob: acknowledged; delivered and acknowledged (each a date and a
	// time), never in his context (no wait or read of his carried it),
	// not read.
	if f := strings.Fields(bobLine); len(f) != 8 || f[1] != "ACKNOWLEDGED" || f[2] == "-" || f[4] != "-" || f[5] != "-" || f[6] == "-" {
		t.Errorf("bob's line %q: want ACKNOWLEDGED, delivered and acknowledged times, in context and read '-'", bobLine)
	}
	if f := strings.Fields(carolLine); len(f) != 6 || f[1] != "QUEUED" || f[2] != "-" || f[3] != "-" || f[4] != "-" || f[5] != "-" {
		t.Errorf("carol's line %q: want QUEUED, nothing delivered, in context, read or acknowledged", carolLine)
	}

	bad := h.hubctl(t, nil, "send", "--to", "bob", "--priority", "critical", "x")
	if bad.code != 2 || !strings.Contains(bad.stderr, "low, normal, high, urgent") {
		t.Errorf("--priority critical: exit %d, stderr %q; want a usage error naming the choices", bad.code, bad.stderr)
	}
	if r := h.hubctl(t, nil, "messages", "show", "999999"); r.code == 0 || !strings.Contains(r.stderr, "999999") {
		t.Errorf("messages show of an unknown ID: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestReachabilityAndPathShown: `agent list` says who can be reached now
// and by which paths, `agent show` lists the paths seen, and `messages
// show` names the path that put a message in a recipient's context.
func TestReachabilityAndPathShown(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	bobTok := h.addAgent(t, "bob")
	h.addAgent(t, "carol")
	if out := h.hubctl(t, nil, "send", "--to", "carol", "anyone there?").must(t).stdout; !strings.Contains(out, "Stored for carol: never connected yet") {
		t.Errorf("send to carol, never connected:\n%s\nwant the line naming her unreachable", out)
	}
	agent, bob := h.agentClient(t, bobTok)
	ctx, cancel := context.WithCancel(bob)
	defer cancel()
	parked := make(chan struct{})
	go func() {
		close(parked)
		agent.WaitForMessages(ctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30), AfterId: ""})
	}()
	<-parked
	var list string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if list = h.hubctl(t, nil, "agent", "list").must(t).stdout; strings.Contains(list, "yes (wait)") {
			break
		}
	}
	if !strings.Contains(list, "REACHABLE") {
		t.Fatalf("agent list has no REACHABLE column:\n%s", list)
	}
	for _, l := range strings.Split(list, "\n") {
		switch {
		case strings.HasPrefix(l, "bob ") && !strings.Contains(l, "yes (wait)"):
			t.Errorf("bob's row %q: want reachable by his wait", l)
		case strings.HasPrefix(l, "carol ") && !strings.Contains(l, " no "):
			t.Errorf("carol's row %q: want not reachable", l)
		}
	}
	if show := h.hubctl(t, nil, "agent", "show", "bob").must(t).stdout; !strings.Contains(show, "wait live") {
		t.Errorf("agent show bob lacks the live wait:\n%s", show)
	}
	r := h.hubctl(t, nil, "send", "--to", "bob", "-o", "json", "the build is green").must(t)
	var sent struct {
		Message struct{ ID string } `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sent); err != nil {
		t.Fatalf("send -o json = %s: %v", r.stdout, err)
	}
	var show string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if show = h.hubctl(t, nil, "messages", "show", sent.Message.ID).must(t).stdout; strings.Contains(show, "IN_CONTEXT") {
			break
		}
	}
	if !strings.Contains(show, "IN_CONTEXT") || !strings.Contains(show, "via wait") {
		t.Errorf("messages show after bob's wait returned it:\n%s\nwant IN_CONTEXT via wait", show)
	}
}
