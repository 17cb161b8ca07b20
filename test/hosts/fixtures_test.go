package hosts

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// fixtures turns a host's exports into fixture files of internal/usage:
// per signal (metrics, logs; traces are dropped by the hub and not kept)
// the exports' resources in one export body, in OTLP's JSON encoding
// (IDs in hex), whatever encoding the host sent.
func fixtures(host string, exports []otlpExport) (map[string][]byte, error) {
	metrics := &colmetrics.ExportMetricsServiceRequest{}
	logs := &collogs.ExportLogsServiceRequest{}
	for _, e := range exports {
		body := e.Body
		if e.Encoding == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			if body, err = io.ReadAll(zr); err != nil {
				return nil, err
			}
		}
		var m proto.Message
		switch e.Signal {
		case "metrics":
			m = &colmetrics.ExportMetricsServiceRequest{}
		case "logs":
			m = &collogs.ExportLogsServiceRequest{}
		default:
			continue
		}
		if err := decodeExport(body, e.ContentType, m); err != nil {
			return nil, fmt.Errorf("%s export: %w", e.Signal, err)
		}
		switch x := m.(type) {
		case *colmetrics.ExportMetricsServiceRequest:
			metrics.ResourceMetrics = append(metrics.ResourceMetrics, x.ResourceMetrics...)
		case *collogs.ExportLogsServiceRequest:
			logs.ResourceLogs = append(logs.ResourceLogs, x.ResourceLogs...)
		}
	}
	out := map[string][]byte{}
	for signal, m := range map[string]proto.Message{"metrics": metrics, "logs": logs} {
		if proto.Size(m) == 0 {
			continue
		}
		b, err := encodeFixture(m)
		if err != nil {
			return nil, err
		}
		out[host+"_"+signal+".json"] = b
	}
	return out, nil
}

// decodeExport reads an export body in its Content-Type's encoding.
func decodeExport(body []byte, contentType string, m proto.Message) error {
	if strings.HasPrefix(contentType, "application/json") {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return err
		}
		convertIDs(v, func(s string) string {
			if b, err := hex.DecodeString(s); err == nil {
				return base64.StdEncoding.EncodeToString(b)
			}
			return s
		})
		b, _ := json.Marshal(v)
		return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, m)
	}
	return proto.Unmarshal(body, m)
}

// encodeFixture writes m in OTLP's JSON encoding, a resource a line.
func encodeFixture(m proto.Message) ([]byte, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	convertIDs(v, func(s string) string {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return hex.EncodeToString(b)
		}
		return s
	})
	// {"resourceX":[ … ,\n … ]}: one line per resource, so that a diff
	// of a new recording reads.
	var key string
	var res []any
	for k, r := range v.(map[string]any) {
		key, res = k, r.([]any)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "{%q: [\n", key)
	for i, r := range res {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		out.Write(line)
		if i < len(res)-1 {
			out.WriteString(",")
		}
		out.WriteString("\n")
	}
	out.WriteString("]}\n")
	return out.Bytes(), nil
}

// convertIDs rewrites the trace and span IDs in v with conv.
func convertIDs(v any, conv func(string) string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
				x[k] = conv(s)
				continue
			}
			convertIDs(e, conv)
		}
	case []any:
		for _, e := range x {
			convertIDs(e, conv)
		}
	}
}
