package dashboard

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// appendRow writes what protojson writes, as JSON values: every field set
// (fill), strings that need escaping, timestamps with each length of
// fraction, negative and 64-bit numbers, parts with a few fields, lists.
func TestAppendRowIsProtojson(t *testing.T) {
	t.Parallel()
	full := &hubv1.AgentOverview{}
	fill(full.ProtoReflect())
	at := func(d time.Duration) *timestamppb.Timestamp {
		return timestamppb.New(time.Date(2026, 12, 2, 6, 0, 5, 0, time.UTC).Add(d))
	}
	for _, tt := range []struct {
		name string
		row  *hubv1.AgentOverview
	}{
		{"every field", full},
		{"empty", &hubv1.AgentOverview{}},
		{"a change", &hubv1.AgentOverview{Agent: &hubv1.Agent{Name: "alice"}, Health: &hubv1.AgentHealth{EvaluatedAt: at(0)}, UnreadCount: 5}},
		{"strings", &hubv1.AgentOverview{Agent: &hubv1.Agent{Name: "a", Description: "\"quoted\" \\ back\nline\ttab \x01 <b>&amp; é 日本 \U0001F600 end",
			DisplayName: "\u2028\u2029"}}},
		{"fractions", &hubv1.AgentOverview{Agent: &hubv1.Agent{Name: "a", CreatedAt: at(time.Millisecond), DisabledAt: at(time.Microsecond),
			LastSeenAt: at(time.Nanosecond), RetiredAt: at(120 * time.Millisecond)}, Health: &hubv1.AgentHealth{LastActivityAt: at(-time.Hour * 24 * 365 * 60)}}},
		{"numbers", &hubv1.AgentOverview{Agent: &hubv1.Agent{Name: "a", LastInteractionBeat: -1 << 62, SinceLast: 1<<63 - 1}, UnreadCount: -3, ParkedWaits: -7}},
		{"lists", &hubv1.AgentOverview{Agent: &hubv1.Agent{Name: "a", Paths: []*hubv1.DeliveryPath{{Kind: "wait", LastSeenAt: at(0), Live: true}, {}, {Kind: "hook"}}},
			Health: &hubv1.AgentHealth{Findings: []*hubv1.Finding{{Kind: "k", Severity: "warning", Since: at(0), Text: "t"}}, DeepWork: &hubv1.DeepWork{}}}},
	} {
		want, err := rowJSON.Marshal(tt.row)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRow([]byte("x"), tt.row.ProtoReflect())
		if err != nil || string(got[:1]) != "x" {
			t.Fatalf("%s: %q, %v; want the row after what the buffer held", tt.name, got, err)
		}
		var g, w any
		if err := json.Unmarshal(got[1:], &g); err != nil {
			t.Fatalf("%s: %s is not JSON: %v", tt.name, got[1:], err)
		}
		json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got[1:], want)
		}
		back := &hubv1.AgentOverview{}
		if err := protojson.Unmarshal(got[1:], back); err != nil || !proto.Equal(back, tt.row) {
			t.Errorf("%s: protojson reads %s back as %v, %v; want %v", tt.name, got[1:], back, err, tt.row)
		}
	}
}

// A string that is not UTF-8, which protojson refuses, goes with U+FFFD in
// place of each bad byte.
func TestAppendRowReplacesBadUTF8(t *testing.T) {
	t.Parallel()
	got, err := appendRow(nil, (&hubv1.Agent{Name: "a\xffb"}).ProtoReflect())
	if want := `{"name":"a\ufffdb"}`; err != nil || string(got) != want {
		t.Errorf("got %s, %v; want %s", got, err, want)
	}
}
