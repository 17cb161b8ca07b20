package mcpbridge_test

import (
	"slices"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// TestPriorityAndAcknowledgeTools: post_message takes a priority and ack;
// wait_for_messages and read_messages show urgent first with the cursor at
// the newest ID (mark_read covers all of them); acknowledge_message records
// the acknowledgement the sender then sees; a bad priority and a foreign
// message are tool errors.
func TestPriorityAndAcknowledgeTools(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	a := bridge(t, h.GRPCAddress(), h.createAgent(t, "lead"), mcpbridge.Options{}, nil)
	b := bridge(t, h.GRPCAddress(), h.createAgent(t, "worker"), mcpbridge.Options{}, nil)
	c := bridge(t, h.GRPCAddress(), h.createAgent(t, "other"), mcpbridge.Options{}, nil)

	var low, urgent mcpbridge.PostMessageOutput
	mustCall(t, a, "post_message", map[string]any{"to": []string{"worker"}, "body": "when you can", "priority": "low"}, &low)
	mustCall(t, a, "post_message", map[string]any{"to": []string{"worker"}, "body": "stop the deploy", "priority": "urgent", "ack": true}, &urgent)

	var w mcpbridge.WaitOutput
	res := mustCall(t, b, "wait_for_messages", map[string]any{"timeout_seconds": 0}, &w)
	if got := []string{w.Messages[0].ID, w.Messages[1].ID}; len(w.Messages) != 2 || !slices.Equal(got, []string{urgent.ID, low.ID}) {
		t.Fatalf("wait order %+v, want urgent %s then low %s", w.Messages, urgent.ID, low.ID)
	}
	if w.Cursor != urgent.ID || w.Messages[0].Priority != "urgent" || !w.Messages[0].AckRequired || w.Messages[1].Priority != "low" {
		t.Errorf("wait %+v: want cursor %s, urgent with ack_required, then low", w, urgent.ID)
	}
	if txt := resultText(res); !strings.Contains(txt, "urgent") || !strings.Contains(txt, "acknowledge it") {
		t.Errorf("wait text %q does not show the priority and the acknowledgement asked", txt)
	}
	var r mcpbridge.ReadMessagesOutput
	mustCall(t, b, "read_messages", map[string]any{"mark_read": true}, &r)
	if len(r.Messages) != 2 || r.Messages[0].ID != urgent.ID || r.UnreadCount == nil || *r.UnreadCount != 0 {
		t.Errorf("read_messages %+v: want urgent first and nothing left unread", r)
	}

	var ack mcpbridge.AcknowledgeMessageOutput
	mustCall(t, b, "acknowledge_message", map[string]any{"ids": []string{urgent.ID}}, &ack)
	if !slices.Equal(ack.Acknowledged, []string{urgent.ID}) {
		t.Errorf("acknowledged %v, want [%s]", ack.Acknowledged, urgent.ID)
	}
	rc, err := hubv1.NewAgentServiceClient(h.Conn()).GetMessageReceipts(h.adminCtx(), &hubv1.GetMessageReceiptsRequest{Id: urgent.ID})
	if err != nil {
		t.Fatal(err)
	}
	if rs := rc.GetReceipts(); len(rs) != 1 || rs[0].GetAckedAt() == nil || rs[0].GetDeliveredAt() == nil || !rs[0].GetRead() {
		t.Errorf("receipts %v: want worker delivered, read and acknowledged", rs)
	}

	if res := call(t, c, "acknowledge_message", map[string]any{"ids": []string{urgent.ID}}, nil); !res.IsError || !strings.Contains(resultText(res), "not among the messages delivered to you") {
		t.Errorf("a stranger's acknowledgement: %q, want a tool error", resultText(res))
	}
	if res := call(t, a, "post_message", map[string]any{"to": []string{"worker"}, "body": "x", "priority": "critical"}, nil); !res.IsError {
		t.Errorf("priority critical accepted: %q", resultText(res))
	}
}

// TestFrameMessagesUrgentFirst: what hooks inject (FrameMessages) shows
// urgent, then high messages first, and says which ask for an
// acknowledgement.
func TestFrameMessagesUrgentFirst(t *testing.T) {
	t.Parallel()
	text, shown := mcpbridge.FrameMessages([]*hubv1.Message{
		{Id: "1", From: "a", Body: "normal one", Priority: hubv1.Priority_PRIORITY_NORMAL},
		{Id: "2", From: "a", Body: "high one", Priority: hubv1.Priority_PRIORITY_HIGH},
		{Id: "3", From: "b", Body: "urgent one", Priority: hubv1.Priority_PRIORITY_URGENT, AckRequired: true},
	}, 0)
	if len(shown) != 3 {
		t.Errorf("shown %v, want the 3 messages", shown)
	}
	u, hi, n := strings.Index(text, "[3]"), strings.Index(text, "[2]"), strings.Index(text, "[1]")
	if u < 0 || hi < u || n < hi {
		t.Errorf("order in %q: want [3] urgent, [2] high, [1] normal", text)
	}
	if !strings.Contains(text, "(urgent, acknowledge it)") {
		t.Errorf("%q does not tag the urgent message asking for an acknowledgement", text)
	}
}
