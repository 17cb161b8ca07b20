package usage

import (
	"testing"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"
)

// BenchmarkExport is the hub's work on one export of Claude Code's events
// (four records) beyond the HTTP and the store: decoding it (protobuf or
// OTLP's JSON) and the Meter's pass, each export newer than the last.
func BenchmarkExport(b *testing.B) {
	js := readFixture(b, "claude_logs.json")
	req := &collogs.ExportLogsServiceRequest{}
	if err := decode(js, encJSON, nil, req); err != nil {
		b.Fatal(err)
	}
	pb, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		body []byte
		enc  encoding
	}{{"protobuf", pb, encProto}, {"json", js, encJSON}} {
		b.Run(c.name, func(b *testing.B) {
			m := NewMeter()
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			i := 0
			for b.Loop() {
				r := &collogs.ExportLogsServiceRequest{}
				if err := decode(c.body, c.enc, pruneLogs, r); err != nil {
					b.Fatal(err)
				}
				m.Logs(int64(i%1000), r) // 1,000 agents
				i++
			}
		})
	}
}
