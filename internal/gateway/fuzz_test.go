package gateway_test

// Fuzz targets for the REST JSON decoding of the main requests, through the
// gateway's own marshaler and its decoder (the path a REST body takes).
// scripts/ci-fuzz.sh runs each with -fuzz; `go test` runs the seeds.

import (
	"bytes"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/gateway"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// fuzzDecode decodes data as a REST body into a fresh message, and when it
// is accepted checks that it survives a marshal/unmarshal round trip and
// that protojson (the reference) accepts it too.
func fuzzDecode[M proto.Message](t *testing.T, data []byte, newMsg func() M) {
	m := newMsg()
	if err := gateway.JSONMarshaler.NewDecoder(bytes.NewReader(data)).Decode(m); err != nil {
		if err.Error() == "" {
			t.Fatalf("decode %q: empty error message", data)
		}
		return
	}
	out, err := gateway.JSONMarshaler.Marshal(m)
	if err != nil {
		t.Fatalf("decoded %q, but it does not marshal: %v", data, err)
	}
	back := newMsg()
	if err := gateway.JSONMarshaler.Unmarshal(out, back); err != nil {
		t.Fatalf("decoded %q, marshalled %s, which does not decode: %v", data, out, err)
	}
	if !proto.Equal(m, back) {
		t.Fatalf("round trip changed the message: %v → %s → %v", m, out, back)
	}
	ref := newMsg()
	if err := (protojson.UnmarshalOptions{}).Unmarshal(out, ref); err != nil || !proto.Equal(ref, m) {
		t.Fatalf("protojson reads %s differently: %v, %v", out, ref, err)
	}
}

func addSeeds(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{``, `{}`, `null`, `[]`, `{"a":1}`, `{"body":`, `{"body":"\ud800"}`, "{\"body\":\"\xff\"}", `{} {}`, strings.Repeat(`[`, 10000)} {
		f.Add([]byte(s))
	}
}

func FuzzDecodePostMessageRequest(f *testing.F) {
	addSeeds(f,
		`{"to":["bob"],"body":"hi"}`,
		`{"channel":"#ops","body":"hi @bob","mentions":["bob"],"reply_to":"42"}`,
		`{"to":"bob","body":1}`,
		`{"from":"bob","to":["carol"],"body":"I am bob"}`,
		`{"to":["bob","bob"],"body":"\u0000"}`,
		`{"replyTo":"1","body":"camel case names"}`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDecode(t, data, func() *hubv1.PostMessageRequest { return &hubv1.PostMessageRequest{} })
	})
}

func FuzzDecodeWaitForMessagesRequest(f *testing.F) {
	addSeeds(f,
		`{"timeout_seconds":30}`,
		`{"timeout_seconds":0,"after_id":"17","limit":5}`,
		`{"timeout_seconds":"45"}`,
		`{"timeout_seconds":-1}`,
		`{"timeout_seconds":2147483648}`,
		`{"timeout_seconds":1.5}`,
		`{"timeout_seconds":1e3}`,
		`{"timeout_seconds":null,"after_id":""}`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDecode(t, data, func() *hubv1.WaitForMessagesRequest { return &hubv1.WaitForMessagesRequest{} })
	})
}

func FuzzDecodeCreateActivityLogRequest(f *testing.F) {
	addSeeds(f,
		`{"type":"reflection","title":"t","content":["a","b"],"tags":["x"]}`,
		`{"type":"思考","title":"考える","content":["行1"]}`,
		`{"type":"other","urgent_reason":"prod down"}`,
		`{"content":"not a list"}`,
		`{"tags":[1,2]}`,
		`{"type":"other","heartbeat_id":"20260102030405"}`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDecode(t, data, func() *hubv1.CreateActivityLogRequest { return &hubv1.CreateActivityLogRequest{} })
	})
}
