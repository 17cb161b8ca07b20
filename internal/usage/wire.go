package usage

import (
	"bytes"
	"errors"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
)

// A host's export carries far more than usage: Claude Code's events are
// mostly hooks, plugins and prompts, a few dozen attributes each, of
// which the hub reads a handful of events (eventRules); its metrics
// include session counts and active time. Decoding all of it into the
// OTLP types was most of an export's cost to the hub. So a protobuf
// export is first pruned on the wire: log records that cannot name an
// event the hub reads, and the data of metrics it does not count, are cut
// before the export is decoded; what is left is decoded as before.

// Field numbers of the OTLP messages pruned (opentelemetry-proto:
// collector/*/v1, logs/v1, metrics/v1).
const (
	fieldResourceLogs    protowire.Number = 1 // ExportLogsServiceRequest.resource_logs
	fieldResource        protowire.Number = 1 // ResourceLogs.resource
	fieldScopeLogs       protowire.Number = 2 // ResourceLogs.scope_logs
	fieldLogRecords      protowire.Number = 2 // ScopeLogs.log_records
	fieldResourceMetrics protowire.Number = 1 // ExportMetricsServiceRequest.resource_metrics
	fieldScopeMetrics    protowire.Number = 2 // ResourceMetrics.scope_metrics
	fieldMetrics         protowire.Number = 2 // ScopeMetrics.metrics
	fieldMetricName      protowire.Number = 1 // Metric.name
)

// eventWords are what the name of every event the hub reads contains,
// whatever the place a host writes it (its event.name attribute, its
// event_name, its body) and whether or not with the host's prefix: the
// part of each name of eventRules after the host's prefix. Made at its
// first use.
var eventWords = sync.OnceValue(func() [][]byte {
	var ws [][]byte
	for name := range eventRules {
		_, w, _ := strings.Cut(name, ".")
		ws = append(ws, []byte(w))
	}
	return ws
})

// Field numbers of what names a log record's event (eventName).
const (
	fieldResourceAttributes protowire.Number = 1  // Resource.attributes
	fieldRecordBody         protowire.Number = 5  // LogRecord.body
	fieldRecordAttributes   protowire.Number = 6  // LogRecord.attributes
	fieldRecordEventName    protowire.Number = 12 // LogRecord.event_name
	fieldKey                protowire.Number = 1  // KeyValue.key
	fieldValue              protowire.Number = 2  // KeyValue.value
	fieldStringValue        protowire.Number = 1  // AnyValue.string_value
)

// mayName reports whether an encoded log record (or resource: its
// attributes are every record's) may name an event the hub reads: whether
// a place eventName reads a name from holds one of eventWords.
func mayName(msg []byte) bool {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return true // the decoding says what is wrong
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return true
		}
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(msg[n:])
			switch num {
			case fieldRecordEventName:
				if hasEventWord(v) {
					return true
				}
			case fieldRecordBody:
				if hasEventWord(field(v, fieldStringValue)) {
					return true
				}
			case fieldRecordAttributes, fieldResourceAttributes: // a record's field 1 is no bytes
				if string(field(v, fieldKey)) == "event.name" && hasEventWord(field(field(v, fieldValue), fieldStringValue)) {
					return true
				}
			}
		}
		msg = msg[n+m:]
	}
	return false
}

// hasEventWord reports whether s holds one of eventWords.
func hasEventWord(s []byte) bool {
	for _, w := range eventWords() {
		if bytes.Contains(s, w) {
			return true
		}
	}
	return false
}

// pruneLogs returns a protobuf ExportLogsServiceRequest without the log
// records that cannot name an event the hub reads, nor the resources left
// with no record (which say nothing: a resource's attributes count only
// with its records); the records and resources kept keep only the
// attributes the hub reads (readKeys). A resource that may name an event
// itself keeps its records whole.
func pruneLogs(body []byte) ([]byte, error) {
	return prune(nil, body, []protowire.Number{fieldResourceLogs}, func(resourceLogs []byte) ([]byte, bool) {
		if mayName(field(resourceLogs, fieldResource)) {
			return resourceLogs, true
		}
		kept := false
		pruned, err := prune(nil, resourceLogs, []protowire.Number{fieldScopeLogs, fieldLogRecords}, func(record []byte) ([]byte, bool) {
			if !mayName(record) {
				return nil, false
			}
			kept = true
			return readAttributes(record, fieldRecordAttributes), true
		})
		if err == nil && kept {
			pruned, err = prune(nil, pruned, []protowire.Number{fieldResource}, func(resource []byte) ([]byte, bool) {
				return readAttributes(resource, fieldResourceAttributes), true
			})
		}
		if err != nil {
			return resourceLogs, true // the decoding says what is wrong
		}
		return pruned, kept
	})
}

// readAttributes returns an encoded message without those of its
// attributes (KeyValues of field num) that the hub does not read.
func readAttributes(msg []byte, num protowire.Number) []byte {
	out, err := prune(nil, msg, []protowire.Number{num}, func(kv []byte) ([]byte, bool) {
		return kv, readKeys[string(field(kv, fieldKey))]
	})
	if err != nil {
		return msg // the decoding says what is wrong
	}
	return out
}

// Field numbers of what a metric's data points are (metrics/v1): the
// kinds the Meter reads.
const (
	fieldMetricSum                protowire.Number = 7 // Metric.sum
	fieldMetricHistogram          protowire.Number = 9 // Metric.histogram
	fieldDataPoints               protowire.Number = 1 // Sum.data_points, Histogram.data_points
	fieldNumberPointAttributes    protowire.Number = 7 // NumberDataPoint.attributes
	fieldHistogramPointAttributes protowire.Number = 9 // HistogramDataPoint.attributes
	fieldMetricsResource          protowire.Number = 1 // ResourceMetrics.resource
)

// pruneMetrics returns a protobuf ExportMetricsServiceRequest whose
// metrics that count no usage (metricRules) keep only their name (what
// tells a host's own metrics apart from the gen_ai.* ones it repeats),
// without the resources none of whose metrics counts usage, and without
// the data points of the sessions whose events count their usage
// (events: the agent's sessions that send events, as the Meter knew them
// before; nil: none), which the Meter passes over.
func pruneMetrics(body []byte, events *eventSessions) ([]byte, error) {
	return prune(nil, body, []protowire.Number{fieldResourceMetrics}, func(resourceMetrics []byte) ([]byte, bool) {
		res := field(resourceMetrics, fieldMetricsResource)
		counts := false
		pruned, err := prune(nil, resourceMetrics, []protowire.Number{fieldScopeMetrics, fieldMetrics}, func(metric []byte) ([]byte, bool) {
			name := string(field(metric, fieldMetricName))
			if metricRules[name] == nil {
				return protowire.AppendString(protowire.AppendTag(nil, fieldMetricName, protowire.BytesType), name), true
			}
			counts = true
			if events.none() {
				return metric, true
			}
			for _, kind := range []struct{ data, attributes protowire.Number }{
				{fieldMetricSum, fieldNumberPointAttributes}, {fieldMetricHistogram, fieldHistogramPointAttributes},
			} {
				kept, err := prune(nil, metric, []protowire.Number{kind.data, fieldDataPoints}, func(point []byte) ([]byte, bool) {
					sid, known := pointSession(res, point, kind.attributes)
					return point, !known || !events.byEvents(sid)
				})
				if err != nil {
					return metric, true // the decoding says what is wrong
				}
				metric = kept
			}
			return metric, true
		})
		if err != nil {
			return resourceMetrics, true // the decoding says what is wrong
		}
		return pruned, counts
	})
}

// pointSession is the session of an encoded data point whose attributes
// are its fields num, over those of its encoded resource (attrs.session
// of the two merged); known is false when an attribute it reads is not a
// string.
func pointSession(resource, point []byte, num protowire.Number) (sid string, known bool) {
	for _, key := range []string{"session.id", "conversation.id"} {
		v, ok := stringAttribute(point, num, key)
		if !ok {
			return "", false
		}
		if v == nil {
			if v, ok = stringAttribute(resource, fieldResourceAttributes, key); !ok {
				return "", false
			}
		}
		if len(v) > 0 {
			return string(v), true
		}
	}
	return "", true
}

// stringAttribute returns the value of the last attribute key among the
// fields num of an encoded message (nil: none; an empty string is not
// nil); ok is false when the value is not a string.
func stringAttribute(msg []byte, num protowire.Number, key string) (v []byte, ok bool) {
	ok = true
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(n, typ, msg[l:])
		if m < 0 {
			return nil, false
		}
		if n == num && typ == protowire.BytesType {
			kv, _ := protowire.ConsumeBytes(msg[l:])
			if string(field(kv, fieldKey)) == key {
				v, ok = stringValue(field(kv, fieldValue))
			}
		}
		msg = msg[l+m:]
	}
	return v, ok
}

// stringValue returns an encoded AnyValue's string (never nil); ok is
// false for a value of another kind.
func stringValue(value []byte) (s []byte, ok bool) {
	s = []byte{}
	for len(value) > 0 {
		n, typ, l := protowire.ConsumeTag(value)
		if l < 0 || n != fieldStringValue || typ != protowire.BytesType {
			return nil, false
		}
		v, m := protowire.ConsumeBytes(value[l:])
		if m < 0 {
			return nil, false
		}
		s = v
		value = value[l+m:]
	}
	return s, true
}

// field is the first of msg's fields num of the bytes type (nil when it
// has none or does not parse: the decoding that follows says what is
// wrong).
func field(msg []byte, num protowire.Number) []byte {
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return nil
		}
		if n == num && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(msg[l:])
			if m < 0 {
				return nil
			}
			return v
		}
		m := protowire.ConsumeFieldValue(n, typ, msg[l:])
		if m < 0 {
			return nil
		}
		msg = msg[l+m:]
	}
	return nil
}

// errTruncated is a message whose fields do not parse.
var errTruncated = errors.New("truncated or malformed protobuf")

// prune appends msg to dst with its fields as they are, except the
// embedded messages of field path[0], which are pruned by path[1:]; at
// the path's end, leaf decides each embedded message: written as it
// returns it, or left out (false).
func prune(dst, msg []byte, path []protowire.Number, leaf func([]byte) ([]byte, bool)) ([]byte, error) {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, errTruncated
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return nil, errTruncated
		}
		if num != path[0] || typ != protowire.BytesType {
			dst = append(dst, msg[:n+m]...)
			msg = msg[n+m:]
			continue
		}
		v, _ := protowire.ConsumeBytes(msg[n:])
		msg = msg[n+m:]
		if len(path) > 1 {
			inner, err := prune(nil, v, path[1:], leaf)
			if err != nil {
				return nil, err
			}
			v = inner
		} else if kept, ok := leaf(v); ok {
			v = kept
		} else {
			continue
		}
		dst = protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), v)
	}
	return dst, nil
}
