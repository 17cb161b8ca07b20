package mcpbridge_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

func TestIDsTakeIntegersOrStrings(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := bridge(t, h.GRPCAddress(), h.createAgent(t, "alice"), mcpbridge.Options{}, nil)
	bob := bridge(t, h.GRPCAddress(), h.createAgent(t, "bob"), mcpbridge.Options{}, nil)

	var first mcpbridge.PostMessageOutput
	mustCall(t, alice, "post_message", map[string]any{"to": []string{"bob"}, "body": "one"}, &first)
	id, err := json.Number(first.ID).Int64()
	if err != nil {
		t.Fatalf("post_message id %q is not a decimal string: %v", first.ID, err)
	}
	var reply mcpbridge.PostMessageOutput
	mustCall(t, bob, "post_message", map[string]any{"to": []string{"alice"}, "body": "re", "reply_to": id}, &reply)

	var byInt, byString mcpbridge.ReadMessagesOutput
	mustCall(t, alice, "read_messages", map[string]any{"all": true, "after": id}, &byInt)
	mustCall(t, alice, "read_messages", map[string]any{"all": true, "after": first.ID}, &byString)
	if len(byInt.Messages) != 1 || byInt.Messages[0].ID != reply.ID || byInt.Messages[0].ReplyTo != first.ID {
		t.Errorf("read after %d = %+v, want only the reply %s to %s", id, byInt.Messages, reply.ID, first.ID)
	}
	if byInt.Cursor != byString.Cursor || len(byString.Messages) != 1 {
		t.Errorf("after as integer and as string differ: %+v vs %+v", byInt, byString)
	}

	var w mcpbridge.WaitOutput
	mustCall(t, bob, "wait_for_messages", map[string]any{"after": 0, "timeout_seconds": 0}, &w)
	if len(w.Messages) != 1 || w.Messages[0].ID != first.ID {
		t.Errorf("wait after 0 = %+v, want message %s", w.Messages, first.ID)
	}
	var mr mcpbridge.MarkReadOutput
	mustCall(t, bob, "mark_read", map[string]any{"up_to_id": id}, &mr)
	if mr.ReadUpToID != first.ID || mr.UnreadCount != 0 {
		t.Errorf("mark_read up to %d = %+v, want read up to %s and 0 unread", id, mr, first.ID)
	}

	var hb mcpbridge.HeartbeatOutput
	mustCall(t, bob, "heartbeat", nil, &hb)
	hbID, err := json.Number(hb.HeartbeatID).Int64()
	if err != nil {
		t.Fatalf("heartbeat ID %q: %v", hb.HeartbeatID, err)
	}
	var el mcpbridge.ElapsedOutput
	mustCall(t, bob, "get_heartbeat_elapsed_time", map[string]any{"heartbeat_id": hbID}, &el)
	if el.HeartbeatID != hb.HeartbeatID {
		t.Errorf("elapsed of %d names %q", hbID, el.HeartbeatID)
	}

	res := call(t, bob, "mark_read", map[string]any{"up_to_id": true}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "up_to_id") {
		t.Errorf("mark_read with a boolean ID = %q, want an error naming up_to_id", resultText(res))
	}
}

func TestSchemasDeclareEnumsBoundsAndDefaults(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	cs := bridge(t, h.GRPCAddress(), h.createAgent(t, "reader"), mcpbridge.Options{}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]map[string]any{}
	for _, tool := range res.Tools {
		in, _ := tool.InputSchema.(map[string]any)
		p, _ := in["properties"].(map[string]any)
		for name, v := range p {
			props[tool.Name+"."+name], _ = v.(map[string]any)
		}
	}
	enums := map[string][]string{
		"create_activity_log.type": {"thinking", "observation", "creation", "reflection", "other"},
		"start_deep_work.mode":     {"flexible", "strict"},
	}
	for field, want := range enums {
		var got []string
		for _, v := range props[field]["enum"].([]any) {
			got = append(got, v.(string))
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s enum = %v, lacks %q", field, got, w)
			}
		}
		if props[field]["description"] == "" {
			t.Errorf("%s has no description", field)
		}
	}
	bounds := map[string][3]float64{ // minimum, maximum, default
		"wait_for_messages.timeout_seconds": {0, 60, 45},
		"wait_for_messages.limit":           {1, 100, 20},
		"read_messages.limit":               {1, 100, 20},
	}
	for field, want := range bounds {
		p := props[field]
		if p["minimum"] != want[0] || p["maximum"] != want[1] || p["default"] != want[2] {
			t.Errorf("%s = min %v max %v default %v, want %v", field, p["minimum"], p["maximum"], p["default"], want)
		}
	}
	for _, field := range []string{"read_messages.after", "mark_read.up_to_id", "wait_for_messages.after", "post_message.reply_to", "get_heartbeat_elapsed_time.heartbeat_id"} {
		if got := props[field]["type"]; !slices.Equal(toStrings(got), []string{"integer", "string"}) {
			t.Errorf("%s type = %v, want [integer string]", field, got)
		}
	}
}

func toStrings(v any) []string {
	var out []string
	vs, _ := v.([]any)
	for _, x := range vs {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestListAgentsAndChannels(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	if _, err := h.admin.CreateAgent(h.adminCtx(), &hubv1.CreateAgentRequest{Name: "reviewer", Role: "code review"}); err != nil {
		t.Fatal(err)
	}
	alice := bridge(t, h.GRPCAddress(), h.createAgent(t, "alice"), mcpbridge.Options{}, nil)
	bob := bridge(t, h.GRPCAddress(), h.createAgent(t, "bob"), mcpbridge.Options{}, nil)

	var none mcpbridge.ListChannelsOutput
	res := mustCall(t, alice, "list_channels", nil, &none)
	if len(none.Channels) != 0 || !strings.Contains(resultText(res), "No channels") {
		t.Errorf("list_channels on a new hub = %+v %q", none, resultText(res))
	}
	mustCall(t, alice, "join_channel", map[string]any{"channel": "dev"}, nil)
	mustCall(t, bob, "join_channel", map[string]any{"channel": "#dev"}, nil)
	mustCall(t, bob, "join_channel", map[string]any{"channel": "#ops"}, nil)

	var chans mcpbridge.ListChannelsOutput
	mustCall(t, alice, "list_channels", nil, &chans)
	want := []mcpbridge.ChannelInfo{{Name: "#dev", MemberCount: 2, Joined: true}, {Name: "#ops", MemberCount: 1}}
	if !slices.Equal(chans.Channels, want) {
		t.Errorf("alice's list_channels = %+v, want %+v", chans.Channels, want)
	}

	var agents mcpbridge.ListAgentsOutput
	res = mustCall(t, bob, "list_agents", nil, &agents)
	var names []string
	for _, a := range agents.Agents {
		names = append(names, a.Name)
		if a.Presence == "" {
			t.Errorf("%s has no presence", a.Name)
		}
		if a.Name == "reviewer" && (a.Role != "code review" || a.Presence != "offline") {
			t.Errorf("reviewer = %+v, want role and presence offline (it never called)", a)
		}
		if a.Name == "alice" && a.Presence != "active" {
			t.Errorf("alice = %+v, want active (she just called)", a)
		}
	}
	if !slices.Equal(names, []string{"alice", "bob", "reviewer"}) {
		t.Errorf("list_agents names = %v", names)
	}
	if !strings.Contains(resultText(res), "reviewer (code review): offline") {
		t.Errorf("list_agents text %q lacks the reviewer's role and presence", resultText(res))
	}
}

// The prompts offered for the common starts exist and say what to call.
func TestPrompts(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	cs := bridge(t, h.GRPCAddress(), h.createAgent(t, "prompted"), mcpbridge.Options{}, nil)
	for name, tool := range map[string]string{"join-hub": "heartbeat", "start-deep-work": "start_deep_work", "reflect": "create_activity_log"} {
		r, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name})
		if err != nil {
			t.Fatalf("GetPrompt %s: %v", name, err)
		}
		if txt := r.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(txt, tool) {
			t.Errorf("prompt %s does not mention %s", name, tool)
		}
	}
}

func TestChannelTools(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := bridge(t, h.GRPCAddress(), h.createAgent(t, "alice"), mcpbridge.Options{}, nil)
	bob := bridge(t, h.GRPCAddress(), h.createAgent(t, "bob"), mcpbridge.Options{}, nil)

	var joined mcpbridge.ChannelOutput
	mustCall(t, bob, "join_channel", map[string]any{"channel": "ops"}, &joined)
	if joined.Channel != "#ops" || !slices.Equal(joined.Members, []string{"bob"}) {
		t.Errorf("join_channel = %+v, want #ops with members [bob]", joined)
	}
	var first, second mcpbridge.PostMessageOutput
	mustCall(t, alice, "post_message", map[string]any{"channel": "#ops", "body": "deploy at noon"}, &first)
	var read mcpbridge.ReadMessagesOutput
	mustCall(t, bob, "read_messages", map[string]any{"mark_read": true}, &read)
	if len(read.Messages) != 1 || read.Messages[0].ID != first.ID || read.Messages[0].Channel != "#ops" {
		t.Fatalf("bob read %+v, want the #ops message %s", read.Messages, first.ID)
	}
	if read.UnreadCount == nil || *read.UnreadCount != 0 {
		t.Errorf("read_messages mark_read left unread = %v, want 0", read.UnreadCount)
	}

	var left mcpbridge.ChannelOutput
	mustCall(t, bob, "join_channel", map[string]any{"channel": "#ops", "leave": true}, &left)
	if left.Channel != "#ops" {
		t.Errorf("join_channel leave = %+v, want #ops", left)
	}
	mustCall(t, alice, "post_message", map[string]any{"channel": "#ops", "body": "deploy moved"}, &second)
	var after mcpbridge.ReadMessagesOutput
	mustCall(t, bob, "read_messages", nil, &after)
	if len(after.Messages) != 0 {
		t.Errorf("after leaving, bob read %+v, want nothing", after.Messages)
	}
}
