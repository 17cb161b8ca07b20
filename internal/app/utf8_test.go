package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// rawCodec sends pre-encoded bytes as the request and decodes replies as
// protobuf: it lets a test send what a well-behaved client never would.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return proto.Unmarshal(data.Materialize(), v.(proto.Message))
}

// Invalid UTF-8 in a string field is InvalidArgument naming the field (over
// REST, 400), not Internal, and writes nothing.
func TestInvalidUTF8IsInvalidArgument(t *testing.T) {
	t.Parallel()
	m := relHub(t, nil)
	tok := relCreateAgent(t, m, "alice")
	relCreateAgent(t, m, "bob")
	conn := relDial(t, m)
	fields := (&hubv1.PostMessageRequest{}).ProtoReflect().Descriptor().Fields()
	var b []byte
	b = protowire.AppendTag(b, fields.ByName("to").Number(), protowire.BytesType)
	b = protowire.AppendString(b, "bob")
	b = protowire.AppendTag(b, fields.ByName("body").Number(), protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("caf\xe9 \xff"))
	before := dbFingerprint(t, m)
	var reply hubv1.PostMessageResponse
	err := conn.Invoke(bearer(context.Background(), tok), "/hub.v1.AgentService/PostMessage", b, &reply, grpc.ForceCodecV2(rawCodec{}))
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "body is not valid UTF-8") {
		t.Errorf("post with invalid UTF-8: %v, want InvalidArgument naming body", err)
	}
	// Over REST (in process, no encoding): the JSON decoder refuses the body.
	code, text := restRaw(t, m, "/v1/messages", []byte("{\"to\":[\"bob\"],\"body\":\"caf\xe9 \xff\"}"), map[string]string{"Authorization": "Bearer " + tok})
	if code != http.StatusBadRequest || !strings.Contains(text, "UTF-8") {
		t.Errorf("REST post with invalid UTF-8: HTTP %d %s, want 400 naming UTF-8", code, text)
	}
	// In the URL: refused by the gateway, not answered 500 by the encoder.
	admin := relAdminToken(t, m)
	for _, path := range []string{"/v1/admin/agents/%FF", "/v1/admin/agents/bob/activity?type=%FE"} {
		resp, text := restCall(t, m, "GET", path, admin, "", nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(text, "not valid UTF-8") {
			t.Errorf("GET %s: HTTP %d %s, want 400 naming UTF-8", path, resp.StatusCode, text)
		}
	}
	if dbFingerprint(t, m) != before {
		t.Error("the refused post wrote to the database")
	}
}

// A call a stream carries with invalid UTF-8 in a string field is refused
// as the call alone and the stream's first request are (InvalidArgument
// naming the field; it ends the stream), not run with the text as it came.
func TestInvalidUTF8InACarriedCall(t *testing.T) {
	t.Parallel()
	m := relHub(t, nil)
	tok := relCreateAgent(t, m, "alice")
	conn := relDial(t, m)
	ctx, cancel := context.WithCancel(bearer(context.Background(), tok))
	defer cancel()
	st, err := conn.NewStream(ctx, &hubv1.AgentService_ServiceDesc.Streams[0], hubv1.AgentService_Subscribe_FullMethodName, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	first, err := proto.Marshal(&hubv1.SubscribeRequest{Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendMsg(first); err != nil {
		t.Fatal(err)
	}
	if err := st.RecvMsg(&hubv1.SubscribeFrame{}); err != nil {
		t.Fatalf("the stream's first frame: %v", err)
	}
	// call {id: 1, note_host_event: {event, text: invalid}}, by hand: a
	// client's encoder refuses to write it.
	callFields := (&hubv1.StreamCall{}).ProtoReflect().Descriptor().Fields()
	noteFields := (&hubv1.NoteHostEventRequest{}).ProtoReflect().Descriptor().Fields()
	var note []byte
	note = protowire.AppendTag(note, noteFields.ByName("event").Number(), protowire.BytesType)
	note = protowire.AppendString(note, "notification")
	note = protowire.AppendTag(note, noteFields.ByName("text").Number(), protowire.BytesType)
	note = protowire.AppendBytes(note, []byte("caf\xe9 \xff"))
	var call []byte
	call = protowire.AppendTag(call, callFields.ByName("id").Number(), protowire.VarintType)
	call = protowire.AppendVarint(call, 1)
	call = protowire.AppendTag(call, callFields.ByName("note_host_event").Number(), protowire.BytesType)
	call = protowire.AppendBytes(call, note)
	var later []byte
	later = protowire.AppendTag(later, (&hubv1.SubscribeRequest{}).ProtoReflect().Descriptor().Fields().ByName("call").Number(), protowire.BytesType)
	later = protowire.AppendBytes(later, call)
	if err := st.SendMsg(later); err != nil {
		t.Fatal(err)
	}
	for {
		var f hubv1.SubscribeFrame
		err := st.RecvMsg(&f)
		if err == nil {
			if r := f.GetReply(); r != nil {
				t.Fatalf("the call was answered %v; want the stream ended with InvalidArgument", r)
			}
			continue
		}
		if s := status.Convert(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "call.note_host_event.text is not valid UTF-8") {
			t.Errorf("the stream ended with %v; want InvalidArgument naming call.note_host_event.text", err)
		}
		return
	}
}
