// Package gateway serves the hub's REST/JSON API (grpc-gateway over the
// API's services, called in process), the OpenAPI document, and the health
// endpoints.
package gateway

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
)

// openAPIDoc is the OpenAPI 3 document of everything the hub serves over
// HTTP, made from the protos at generation time (internal/openapidoc); the
// hub fills in its version when it serves it (openAPI).
//
//go:embed openapi/hub.openapi.json
var openAPIDoc []byte

// openAPI returns the embedded OpenAPI document with version as its
// info.version.
func openAPI(version string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	var info map[string]any
	if err := json.Unmarshal(doc["info"], &info); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document's info: %w", err)
	}
	info["version"] = version
	b, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	doc["info"] = b
	return json.Marshal(doc)
}

// Options configure the HTTP handler.
type Options struct {
	// Ready reports whether the hub can serve (store reachable, migrated).
	Ready func(ctx context.Context) error
	// Extra handlers mounted beside the API, by pattern (e.g. "/mcp", "/metrics").
	Extra map[string]http.Handler
	// Version is the hub's version, shown in the OpenAPI document.
	Version string
	// Gate checks each REST call's credential before its body is read
	// (guard.go): the token of an agent or admin call, the join code of a
	// join call (JoinPath), under the join budgets. Nil skips the token
	// check (the handlers' interceptors still make the full one) and
	// refuses every join call.
	Gate *admission.Gate
	// Refused is told of each REST call refused for want of a known token
	// (for a sampled log line).
	Refused func(r *http.Request, reason string)
	// AllowHost reports whether a request may name host (its Host header,
	// without the port): a hub on loopback answers only names of loopback
	// and those configured, so a web page on another name cannot reach it
	// through DNS rebinding. Nil allows every host.
	AllowHost func(host string) bool
}

// JoinPath is the REST path of AgentService.JoinHub (gateway.yaml): the one
// /v1/ call whose bearer credential is a join code, not a token.
const JoinPath = "/v1/agents:join"

// JSONMarshaler is the REST JSON format: proto field names (snake_case, as
// in the protos) and every field present, so scripts see false and 0.
var JSONMarshaler = &runtime.JSONPb{
	MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
	UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
}

// New returns the hub's HTTP handler. REST calls go to the API's handlers
// through conn (the hub passes its in-process connection, inproc.Conn), so
// they pass the same interceptors: authentication, limits, validation. conn
// needs to serve unary calls only; the gateway reads the handler's headers
// and trailers (the request ID, Retry-After) through the grpc.Header and
// grpc.Trailer call options, and a Grpc-Timeout header becomes the call
// context's deadline.
func New(ctx context.Context, conn grpc.ClientConnInterface, opts Options) (http.Handler, error) {
	gw := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, JSONMarshaler),
		runtime.WithErrorHandler(errorHandler),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithOutgoingHeaderMatcher(outgoingHeader),
	)
	if err := hubv1.RegisterAgentServiceHandlerClient(ctx, gw, hubv1.NewAgentServiceClient(conn)); err != nil {
		return nil, err
	}
	if err := hubv1.RegisterAdminServiceHandlerClient(ctx, gw, hubv1.NewAdminServiceClient(conn)); err != nil {
		return nil, err
	}
	docJSON, err := openAPI(opts.Version)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", guard(gw, opts))
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(docJSON)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if opts.Ready != nil {
			if err := opts.Ready(r.Context()); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "error": err.Error()})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	for pattern, h := range opts.Extra {
		mux.Handle(pattern, h)
	}
	if opts.AllowHost != nil {
		return hostGuard(mux, opts.AllowHost), nil
	}
	return mux, nil
}

// requestIDHeader is the request ID's header and metadata key
// (server.RequestIDKey): a client's X-Request-Id reaches the gRPC log, and
// the hub's comes back as X-Request-Id.
const requestIDHeader = "x-request-id"

func incomingHeader(key string) (string, bool) {
	if strings.EqualFold(key, requestIDHeader) {
		return requestIDHeader, true
	}
	if strings.EqualFold(key, grpcMetadataAuthorization) {
		return "", false // only Authorization carries the token
	}
	return runtime.DefaultHeaderMatcher(key)
}

func outgoingHeader(key string) (string, bool) {
	if key == requestIDHeader {
		return "X-Request-Id", true
	}
	return runtime.MetadataHeaderPrefix + key, true
}

// errorHandler is the gateway's default, plus a Retry-After header on 429
// and 503 (the store cannot be reached): the wait the server put in its
// "retry-after" trailer (the rate limiter does), else 1 second; an unknown
// enum name in a body is answered with the names allowed.
func errorHandler(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	err = explainEnum(err)
	if code := runtime.HTTPStatusFromCode(statusCode(err)); (code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable) && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", retryAfter(ctx))
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err)
}

func retryAfter(ctx context.Context) string {
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		for _, v := range append(md.TrailerMD.Get("retry-after"), md.HeaderMD.Get("retry-after")...) {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return v
			}
		}
	}
	return "1"
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
