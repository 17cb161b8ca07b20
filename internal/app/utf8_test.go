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
