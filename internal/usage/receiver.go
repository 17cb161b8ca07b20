package usage

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/hub"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Limits of one export: MaxBody as sent, MaxDecoded once gunzipped.
const (
	MaxBody    = 4 << 20
	MaxDecoded = 16 << 20
)

// Recorder keeps what an export says (hub.Usage): its usage, and the
// tools the host reports the agent ran (activity: their line, empty for
// none), which count as the agent's activity, for its health and the
// leases of the tasks it holds, as a checkpoint of its own would; both in
// one write.
type Recorder interface {
	Record(ctx context.Context, agent *hub.Agent, deltas []hub.UsageDelta, activity string) error
	NoteRateLimit(agent *hub.Agent, at, reset time.Time)
}

// Receiver is the hub's OTLP/HTTP receiver of the agents' hosts' own
// telemetry: metrics and logs are read for usage and the agent's tool
// activity, traces accepted and dropped. The caller is the agent whose
// token is in Authorization.
type Receiver struct {
	Gate  *admission.Gate
	Usage Recorder
	Meter *Meter
}

// Routes are the receiver's handlers by pattern, for the hub's HTTP mux.
func (rc *Receiver) Routes() map[string]http.Handler {
	return map[string]http.Handler{
		"POST /otlp/v1/metrics": rc.handler(signalMetrics),
		"POST /otlp/v1/logs":    rc.handler(signalLogs),
		"POST /otlp/v1/traces":  rc.handler(signalTraces),
	}
}

type signal uint8

const (
	signalMetrics signal = iota
	signalLogs
	signalTraces
)

func (s signal) String() string {
	return [...]string{"metrics", "logs", "traces"}[s]
}

// encoding is an export's Content-Type: protobuf or OTLP's JSON.
type encoding uint8

const (
	encProto encoding = iota
	encJSON
)

func (rc *Receiver) handler(sig signal) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := admission.BearerToken(r.Header)
		caller, release, err := rc.Gate.AdmitRule(r.Context(), admission.OTLPExport, token)
		if err != nil {
			admission.WriteHTTP(w, err, token != "")
			return
		}
		defer release()
		enc, ok := contentType(r.Header.Get("Content-Type"))
		if !ok {
			writeStatus(w, encJSON, http.StatusUnsupportedMediaType, codes.InvalidArgument,
				fmt.Sprintf("Content-Type %q: an OTLP export is application/x-protobuf or application/json", r.Header.Get("Content-Type")))
			return
		}
		buf := buffers.Get().(*buffer)
		defer buffers.Put(buf)
		body, code, msg := readBody(w, r, buf)
		if msg != "" {
			c := codes.InvalidArgument
			if code == http.StatusRequestEntityTooLarge {
				c = codes.ResourceExhausted
			}
			writeStatus(w, enc, code, c, msg)
			return
		}
		var rep Report
		var resp proto.Message
		switch sig {
		case signalMetrics:
			req := &colmetrics.ExportMetricsServiceRequest{}
			events := rc.Meter.eventSessions(caller.Agent.ID)
			prune := func(b []byte) ([]byte, error) { return pruneMetrics(b, events) }
			if err := decode(body, enc, prune, req); err != nil {
				writeStatus(w, enc, http.StatusBadRequest, codes.InvalidArgument, malformed(sig, enc, err))
				return
			}
			rep, resp = rc.Meter.metrics(caller.Agent.ID, req, events), &colmetrics.ExportMetricsServiceResponse{}
		case signalLogs:
			req := &collogs.ExportLogsServiceRequest{}
			if err := decode(body, enc, pruneLogs, req); err != nil {
				writeStatus(w, enc, http.StatusBadRequest, codes.InvalidArgument, malformed(sig, enc, err))
				return
			}
			rep, resp = rc.Meter.Logs(caller.Agent.ID, req), &collogs.ExportLogsServiceResponse{}
		case signalTraces:
			// Accepted and dropped: the hub keeps no traces.
			resp = &coltrace.ExportTraceServiceResponse{}
		}
		if !rep.RateLimited.IsZero() {
			rc.Usage.NoteRateLimit(caller.Agent, rep.RateLimited, time.Time{})
		}
		var activity string
		if !rep.ToolActive.IsZero() {
			activity = rep.Tools
		}
		// Answered once committed: an export answered 200 is kept.
		if err := rc.Usage.Record(r.Context(), caller.Agent, rep.Deltas, activity); err != nil {
			admission.WriteHTTP(w, admission.Status(err), true)
			return
		}
		write(w, enc, http.StatusOK, resp)
	})
}

func malformed(sig signal, enc encoding, err error) string {
	what := "application/x-protobuf"
	if enc == encJSON {
		what = "application/json (OTLP's JSON: lowerCamelCase or proto field names, hex trace and span IDs)"
	}
	return fmt.Sprintf("malformed OTLP %s export: %v; expected an Export%sServiceRequest as %s", sig, err,
		map[signal]string{signalMetrics: "Metrics", signalLogs: "Logs", signalTraces: "Trace"}[sig], what)
}

// contentType reads an export's Content-Type.
func contentType(ct string) (encoding, bool) {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return 0, false
	}
	switch mt {
	case "application/x-protobuf", "application/protobuf":
		return encProto, true
	case "application/json":
		return encJSON, true
	}
	return 0, false
}

// buffer holds an export's body while it is read: the raw body, and the
// body gunzipped.
type buffer struct{ raw, body bytes.Buffer }

// buffers are the buffers of the exports being read: an export's body is
// decoded into values of their own (protobuf and protojson copy what they
// read), so its buffer serves the next one.
var buffers = sync.Pool{New: func() any { return new(buffer) }}

// maxKeptBuffer bounds what a buffer keeps for the next export: one that
// grew past it for a rare large export is let go.
const maxKeptBuffer = 1 << 20

// readBody reads an export's body into buf within the limits, gunzipped
// when its Content-Encoding says gzip; on a refusal it returns the HTTP
// status and the text to answer.
func readBody(w http.ResponseWriter, r *http.Request, buf *buffer) ([]byte, int, string) {
	if r.ContentLength > MaxBody {
		return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("export too large: %d bytes, the limit is %d bytes (4 MiB); export more often or in smaller batches", r.ContentLength, MaxBody)
	}
	for _, b := range []*bytes.Buffer{&buf.raw, &buf.body} {
		if b.Cap() > maxKeptBuffer {
			*b = bytes.Buffer{}
		}
		b.Reset()
	}
	if r.ContentLength > 0 {
		buf.raw.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	var tooBig *http.MaxBytesError
	_, err := buf.raw.ReadFrom(http.MaxBytesReader(w, r.Body, MaxBody))
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("export too large: the limit is %d bytes (4 MiB); export more often or in smaller batches", MaxBody)
	case err != nil:
		return nil, http.StatusBadRequest, "could not read the export: " + err.Error()
	}
	raw := buf.raw.Bytes()
	switch ce := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); ce {
	case "", "identity":
		return raw, 0, ""
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, http.StatusBadRequest, "Content-Encoding gzip, but the body is not gzip: " + err.Error()
		}
		if _, err := buf.body.ReadFrom(io.LimitReader(zr, MaxDecoded+1)); err != nil {
			return nil, http.StatusBadRequest, "Content-Encoding gzip, but the body does not gunzip: " + err.Error()
		}
		if buf.body.Len() > MaxDecoded {
			return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("export too large once gunzipped: over %d bytes (16 MiB); export more often or in smaller batches", MaxDecoded)
		}
		return buf.body.Bytes(), 0, ""
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Encoding %q: an export is sent as it is or gzip", ce)
	}
}

var jsonOpts = protojson.UnmarshalOptions{DiscardUnknown: true}

// decode reads an export in its encoding, protobuf pruned by prune first
// (wire.go). OTLP's JSON writes trace and span IDs in hex where protojson
// reads base64: they are rewritten first.
func decode(body []byte, enc encoding, prune func([]byte) ([]byte, error), m proto.Message) error {
	if enc == encProto {
		body, err := prune(body)
		if err != nil {
			return err
		}
		return proto.Unmarshal(body, m)
	}
	body, err := hexIDsToBase64(body)
	if err != nil {
		return err
	}
	return jsonOpts.Unmarshal(body, m)
}

// idKeys are the JSON fields OTLP writes as hex IDs.
var idKeys = map[string]bool{"traceId": true, "spanId": true, "trace_id": true, "span_id": true, "parentSpanId": true, "parent_span_id": true}

// hexIDsToBase64 rewrites the hex IDs of an OTLP JSON body as base64;
// a body without any is returned as it is.
func hexIDsToBase64(body []byte) ([]byte, error) {
	if !bytes.Contains(body, []byte("panId")) && !bytes.Contains(body, []byte("raceId")) && !bytes.Contains(body, []byte("_id")) {
		return body, nil
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	rewriteIDs(v)
	return json.Marshal(v)
}

func rewriteIDs(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && idKeys[k] {
				if b, err := hex.DecodeString(s); err == nil {
					x[k] = base64.StdEncoding.EncodeToString(b)
				}
				continue
			}
			rewriteIDs(e)
		}
	case []any:
		for _, e := range x {
			rewriteIDs(e)
		}
	}
}

// write answers m in the export's encoding.
func write(w http.ResponseWriter, enc encoding, code int, m proto.Message) {
	var b []byte
	if enc == encJSON {
		b, _ = protojson.Marshal(m)
		w.Header().Set("Content-Type", "application/json")
	} else {
		b, _ = proto.Marshal(m)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}
	w.WriteHeader(code)
	w.Write(b)
}

// writeStatus answers a refused export with a google.rpc.Status, as OTLP
// asks, in the export's encoding.
func writeStatus(w http.ResponseWriter, enc encoding, httpCode int, code codes.Code, msg string) {
	write(w, enc, httpCode, status.New(code, msg).Proto())
}
