package replay

import (
	"testing"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"
)

// Each export of the session lies within the minute before its time, its
// events numbered after those of the export before.
func TestExportsFollowEachOther(t *testing.T) {
	t.Parallel()
	s, err := Load("../testdata/claude_metrics.json", "../testdata/claude_logs.json")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_900_000_000, 0)
	var lastSeq int64 = -1
	for n := range int64(3) {
		at := now.Add(time.Duration(n) * time.Minute)
		_, lb, err := s.Export(n, at)
		if err != nil {
			t.Fatal(err)
		}
		logs := &collogs.ExportLogsServiceRequest{}
		if err := proto.Unmarshal(lb, logs); err != nil {
			t.Fatal(err)
		}
		first, last := int64(-1), int64(-1)
		for _, rl := range logs.GetResourceLogs() {
			for _, sl := range rl.GetScopeLogs() {
				for _, lr := range sl.GetLogRecords() {
					if tm := time.Unix(0, int64(lr.GetTimeUnixNano())); tm.Before(at.Add(-time.Minute)) || tm.After(at) {
						t.Errorf("export %d: an event at %v, want within the minute before %v", n, tm, at)
					}
					for _, kv := range lr.GetAttributes() {
						if kv.GetKey() == "event.sequence" {
							seq := kv.GetValue().GetIntValue()
							if first < 0 || seq < first {
								first = seq
							}
							last = max(last, seq)
						}
					}
				}
			}
		}
		if first <= lastSeq {
			t.Errorf("export %d: events numbered from %d, want after %d", n, first, lastSeq)
		}
		lastSeq = last
	}
}
