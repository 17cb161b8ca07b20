package gateway

import (
	"context"
	"errors"
	"net/http"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// routes finds the RPC a REST request calls with the gateway's own
// routing (gateway.yaml, compiled into the generated handlers): a second
// mux with the same handlers, whose client is never reached, is asked
// for the request without its body, and its metadata annotator notes the
// method the handler names. The guard then admits the call by that RPC's
// admission before the body is read.
type routes struct {
	mux *runtime.ServeMux
}

// routeKey holds, in a probe's context, where the method is noted.
type routeKey struct{}

// errProbe ends a probe's call before it reaches any server.
var errProbe = errors.New("gateway: route probe")

func newRoutes(ctx context.Context) (*routes, error) {
	mux := runtime.NewServeMux(
		runtime.WithMetadata(func(ctx context.Context, _ *http.Request) metadata.MD {
			if m, ok := ctx.Value(routeKey{}).(*string); ok {
				*m, _ = runtime.RPCMethod(ctx)
			}
			return nil
		}),
		runtime.WithErrorHandler(func(context.Context, *runtime.ServeMux, runtime.Marshaler, http.ResponseWriter, *http.Request, error) {
		}),
		runtime.WithRoutingErrorHandler(func(context.Context, *runtime.ServeMux, runtime.Marshaler, http.ResponseWriter, *http.Request, int) {}),
	)
	if err := register(ctx, mux, probeConn{}); err != nil {
		return nil, err
	}
	return &routes{mux: mux}, nil
}

// register registers the handlers of the API's services on mux, calling
// them through conn.
func register(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	if err := hubv1.RegisterAgentServiceHandlerClient(ctx, mux, hubv1.NewAgentServiceClient(conn)); err != nil {
		return err
	}
	return hubv1.RegisterAdminServiceHandlerClient(ctx, mux, hubv1.NewAdminServiceClient(conn))
}

// method returns the full method name of the RPC r calls
// ("/hub.v1.AgentService/PostMessage"), "" when no route matches.
func (rt *routes) method(r *http.Request) string {
	var m string
	probe := r.WithContext(context.WithValue(r.Context(), routeKey{}, &m))
	probe.Body, probe.ContentLength = http.NoBody, 0
	// Only the headers that choose a route: the rest are the real call's.
	probe.Header = http.Header{}
	for _, k := range []string{"Content-Type", "X-HTTP-Method-Override"} {
		if v := r.Header.Values(k); v != nil {
			probe.Header[k] = v
		}
	}
	rt.mux.ServeHTTP(discard{}, probe)
	return m
}

// probeConn is the probe's connection: every call ends at once.
type probeConn struct{}

func (probeConn) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	return errProbe
}

func (probeConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errProbe
}

// discard is the probe's response writer.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
