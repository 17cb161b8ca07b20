package app_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestPriorityAndAcknowledgementsEndToEnd: over the real listeners, a post
// marked urgent and asking for an acknowledgement comes first in the
// recipient's parked wait (REST), the recipient acknowledges it (gRPC), and
// the sender (REST) and the admin (gRPC) see it delivered, read and
// acknowledged; bad priorities and foreign or unknown messages are refused
// with what is wrong, and nothing is written.
func TestPriorityAndAcknowledgementsEndToEnd(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice, bob, eve := h.newAgent(t, "alice"), h.newAgent(t, "bob"), h.newAgent(t, "eve")
	aliceCtx, bobCtx, eveCtx := coreBearer(alice), coreBearer(bob), coreBearer(eve)

	// Two posts, the urgent one second; bob's wait returns both, urgent first,
	// with the cursor at the newest.
	normal, err := h.agent.PostMessage(aliceCtx, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "lunch?"})
	if err != nil {
		t.Fatal(err)
	}
	code, raw, v := h.do(t, "POST", "/v1/messages", alice, `{"to":["bob"],"body":"stop the deploy","priority":"PRIORITY_URGENT","ack_required":true}`)
	if code != 200 {
		t.Fatalf("urgent post: HTTP %d %s", code, raw)
	}
	m, _ := v["message"].(map[string]any)
	urgentID, _ := m["id"].(string)
	if m["priority"] != "PRIORITY_URGENT" || m["ack_required"] != true {
		t.Errorf("urgent post reply %v: want priority PRIORITY_URGENT, ack_required true", m)
	}
	code, raw, v = h.do(t, "POST", "/v1/messages:wait", bob, `{"timeout_seconds":30}`)
	if got, want := ids(v), []string{urgentID, normal.GetMessage().GetId()}; code != 200 || fmt.Sprint(got) != fmt.Sprint(want) || v["cursor"] != urgentID {
		t.Fatalf("wait: HTTP %d %s; want messages %v with cursor %s", code, raw, want, urgentID)
	}
	if ms, _ := v["messages"].([]any); len(ms) == 2 {
		if u, _ := ms[0].(map[string]any); u["priority"] != "PRIORITY_URGENT" || u["ack_required"] != true {
			t.Errorf("first message of the wait %v: want the urgent one asking for an acknowledgement", u)
		}
	}

	// Before bob reads or acknowledges: delivered only.
	rc, err := h.agent.GetMessageReceipts(aliceCtx, &hubv1.GetMessageReceiptsRequest{Id: urgentID})
	if err != nil {
		t.Fatal(err)
	}
	if rs := rc.GetReceipts(); len(rs) != 1 || rs[0].GetAgent() != "bob" || rs[0].GetDeliveredAt() == nil || rs[0].GetRead() || rs[0].GetAckedAt() != nil {
		t.Fatalf("receipts before the ack: %v, want bob delivered only", rs)
	}
	if _, err := h.agent.MarkRead(bobCtx, &hubv1.MarkReadRequest{}); err != nil {
		t.Fatal(err)
	}
	ack, err := h.agent.AcknowledgeMessage(bobCtx, &hubv1.AcknowledgeMessageRequest{Ids: []string{urgentID}})
	if err != nil || len(ack.GetAcks()) != 1 || !ack.GetAcks()[0].GetFirst() {
		t.Fatalf("AcknowledgeMessage: %v, %v", ack, err)
	}

	code, raw, v = h.do(t, "GET", "/v1/messages/"+urgentID+"/receipts", alice, "")
	if code != 200 {
		t.Fatalf("GET receipts: HTTP %d %s", code, raw)
	}
	rs, _ := v["receipts"].([]any)
	if len(rs) != 1 {
		t.Fatalf("receipts %s: want one", raw)
	}
	b, _ := rs[0].(map[string]any)
	for _, k := range []string{"delivered_at", "read_at", "acked_at"} {
		if s, _ := b[k].(string); s == "" {
			t.Errorf("bob's receipt has no %s: %s", k, raw)
		} else if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			t.Errorf("receipt %s = %q: %v", k, s, err)
		}
	}
	if b["agent"] != "bob" || b["read"] != true {
		t.Errorf("bob's receipt %v", b)
	}
	adm, err := h.agent.GetMessageReceipts(h.adm, &hubv1.GetMessageReceiptsRequest{Id: urgentID})
	if err != nil || len(adm.GetReceipts()) != 1 || adm.GetReceipts()[0].GetAckedAt() == nil {
		t.Errorf("admin receipts %v, %v: want bob acknowledged", adm, err)
	}

	// Refusals.
	_, before := h.counts(t)
	code, raw, _ = h.do(t, "POST", "/v1/messages", alice, `{"to":["bob"],"body":"x","priority":9}`)
	if code != 400 || !strings.Contains(raw, "low, normal, high, urgent") {
		t.Errorf("priority 9 over REST: HTTP %d %s, want 400 naming the allowed values", code, raw)
	}
	code, raw, _ = h.do(t, "POST", "/v1/messages", alice, `{"to":["bob"],"body":"x","priority":"critical"}`)
	if code != 400 || !strings.Contains(raw, "PRIORITY_URGENT") {
		t.Errorf("priority critical over REST: HTTP %d %s, want 400 naming the allowed values", code, raw)
	}
	_, err = h.agent.PostMessage(h.adm, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "x", Priority: 7})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "low, normal, high, urgent") {
		t.Errorf("admin post with priority 7: %v, want InvalidArgument naming the allowed values", err)
	}
	if _, after := h.counts(t); after != before {
		t.Errorf("refused posts wrote %d messages", after-before)
	}
	for _, c := range []struct {
		what string
		ids  []string
	}{{"a message eve did not receive", []string{urgentID}}, {"an unknown message", []string{"987654"}}} {
		_, err := h.agent.AcknowledgeMessage(eveCtx, &hubv1.AcknowledgeMessageRequest{Ids: c.ids})
		if status.Code(err) != codes.NotFound {
			t.Errorf("eve acknowledging %s: %v, want NotFound", c.what, err)
		}
	}
	code, raw, _ = h.do(t, "POST", "/v1/messages:acknowledge", eve, `{"ids":["`+urgentID+`"]}`)
	if code != 404 {
		t.Errorf("REST ack of a foreign message: HTTP %d %s, want 404", code, raw)
	}
	if code, raw, _ = h.do(t, "GET", "/v1/messages/"+urgentID+"/receipts", eve, ""); code != 404 {
		t.Errorf("eve reading receipts: HTTP %d %s, want 404", code, raw)
	}
	if code, raw, _ = h.do(t, "GET", "/v1/messages/"+urgentID+"/receipts", bob, ""); code != 403 {
		t.Errorf("bob (a recipient) reading receipts: HTTP %d %s, want 403", code, raw)
	}
}

// ids returns the message IDs of a REST wait or list reply, in order.
func ids(v map[string]any) []string {
	var out []string
	ms, _ := v["messages"].([]any)
	for _, m := range ms {
		if mm, ok := m.(map[string]any); ok {
			out = append(out, fmt.Sprint(mm["id"]))
		}
	}
	return out
}
