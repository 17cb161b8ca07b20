package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/termtext"
)

func TestSendAndMessages(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	tok := h.addAgent(t, "alice")
	h.addAgent(t, "bob")

	r := h.hubctl(t, nil, "send", "--to", "alice", "hello", "@bob").must(t)
	if !strings.HasPrefix(r.stdout, "Sent message ") || !strings.Contains(r.stdout, "to alice.") {
		t.Errorf("send: %q", r.stdout)
	}
	sj := h.hubctl(t, nil, "send", "--to", "#ops", "--to", "bob", "-o", "json", "deploy", "done").must(t)
	var sent struct {
		Message struct {
			ID      string   `json:"id"`
			From    string   `json:"from"`
			To      []string `json:"to"`
			Channel string   `json:"channel"`
			Body    string   `json:"body"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(sj.stdout), &sent); err != nil {
		t.Fatalf("send -o json: %v\n%s", err, sj.stdout)
	}
	if sent.Message.From != "admin" || sent.Message.Channel != "#ops" || sent.Message.Body != "deploy done" {
		t.Errorf("send -o json = %+v", sent.Message)
	}
	h.hubctl(t, nil, "send", "--to", "alice", "--reply-to", sent.Message.ID, "ack").must(t)

	all := h.hubctl(t, nil, "messages").must(t)
	if n := strings.Count(all.stdout, "\n"); n != 4 { // header + 3
		t.Errorf("messages: %d lines, want 4:\n%s", n, all.stdout)
	}
	if !strings.Contains(all.stdout, "(re "+sent.Message.ID+") ack") {
		t.Errorf("messages lacks the reply:\n%s", all.stdout)
	}
	// The newest N, oldest first.
	last := h.hubctl(t, nil, "messages", "--limit", "1", "-o", "json").must(t)
	var lj struct {
		Messages []struct{ Body string } `json:"messages"`
		Cursor   string                  `json:"cursor"`
	}
	if err := json.Unmarshal([]byte(last.stdout), &lj); err != nil || len(lj.Messages) != 1 || lj.Messages[0].Body != "ack" {
		t.Errorf("messages --limit 1 -o json = %s (%v)", last.stdout, err)
	}
	after := h.hubctl(t, nil, "messages", "--after", sent.Message.ID, "-o", "json").must(t)
	if strings.Count(after.stdout, `"body"`) != 1 {
		t.Errorf("messages --after %s:\n%s", sent.Message.ID, after.stdout)
	}
	ch := h.hubctl(t, nil, "messages", "--channel", "ops").must(t)
	if !strings.Contains(ch.stdout, "deploy done") || strings.Contains(ch.stdout, "ack") {
		t.Errorf("messages --channel ops:\n%s", ch.stdout)
	}
	ag := h.hubctl(t, nil, "messages", "--agent", "bob").must(t)
	if !strings.Contains(ag.stdout, "deploy done") || strings.Contains(ag.stdout, "ack") {
		t.Errorf("messages --agent bob:\n%s", ag.stdout)
	}

	// alice sees what admin sent her.
	st := h.hubctl(t, map[string]string{"HUB_TOKEN": tok}, "status", "-o", "json").must(t)
	if !strings.Contains(st.stdout, `"unread_count": "2"`) {
		t.Errorf("alice's status: %s", st.stdout)
	}

	for _, bad := range [][]string{
		{"send", "--to", "nobody", "x"},
		{"send", "--to", "alice", "--reply-to", "notanid", "x"},
		{"messages", "--after", "xyz"},
	} {
		if r := h.hubctl(t, nil, bad...); r.code != 1 || r.stderr == "" {
			t.Errorf("hubctl %q: exit %d, stderr %q; want 1 and a message", bad, r.code, r.stderr)
		}
	}
	if r := h.hubctl(t, nil, "send", "--to", "#a", "--to", "#b", "x"); r.code != 2 {
		t.Errorf("two channels: exit %d, want 2", r.code)
	}
}

func TestSendFromStdin(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	h.addAgent(t, "erin")
	var out, errOut bytes.Buffer
	env := map[string]string{"HUB_ADDR": h.addr, "HUB_DATA_DIR": h.dataDir}
	code := run(context.Background(), []string{"send", "--to", "erin", "-o", "json", "-"}, func(k string) string { return env[k] },
		strings.NewReader("line one\nline two\n"), termtext.NewWriter(&out), termtext.NewWriter(&errOut))
	if code != 0 || !strings.Contains(out.String(), `"body": "line one\nline two"`) {
		t.Errorf("send - : exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a concurrent reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestMessagesFollow(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	h.addAgent(t, "fay")
	h.hubctl(t, nil, "send", "--to", "fay", "before").must(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	var errOut bytes.Buffer
	env := map[string]string{"HUB_ADDR": h.addr, "HUB_DATA_DIR": h.dataDir}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"messages", "--follow", "--interval", "20ms", "-o", "json"}, func(k string) string { return env[k] },
			strings.NewReader(""), termtext.NewWriter(&out), termtext.NewWriter(&errOut))
	}()
	for i := range 3 {
		h.hubctl(t, nil, "send", "--to", "fay", fmt.Sprintf("after %d", i)).must(t)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), "\n") < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("messages --follow exit %d after cancel: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"before", "after 0", "after 1", "after 2"}
	if len(lines) != len(want) {
		t.Fatalf("followed %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		var m struct{ Body string }
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Body != want[i] {
			t.Errorf("line %d = %s (%v), want body %q", i, l, err, want[i])
		}
	}
}

func TestBodyLineSaysTheKindOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		m    *hubv1.Message
		want string
	}{
		{&hubv1.Message{Kind: "cron", Body: "[cron tick] standup"}, "[cron tick] standup"},
		{&hubv1.Message{Kind: "nudge", Body: "@a: no activity"}, "[nudge] @a: no activity"},
		{&hubv1.Message{Kind: "message", Body: "hi", ReplyTo: "4"}, "(re 4) hi"},
	}
	for _, tt := range tests {
		if got := bodyLine(tt.m); got != tt.want {
			t.Errorf("bodyLine(%v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}
