package inproc_test

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/agenthub/hub/internal/inproc"
)

// healthServer answers Check by the service name it is asked about, and
// records what its handler saw.
type healthServer struct {
	healthpb.UnimplementedHealthServer
	seen struct {
		token  string
		peer   string
		method string
	}
}

func (s *healthServer) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if v := metadata.ValueFromIncomingContext(ctx, "authorization"); len(v) > 0 {
		s.seen.token = v[0]
	}
	if p, ok := peer.FromContext(ctx); ok {
		s.seen.peer = p.Addr.String()
	}
	s.seen.method, _ = grpc.Method(ctx)
	switch req.GetService() {
	case "plain-error":
		return nil, errors.New("disk on fire")
	case "not-found":
		return nil, status.Error(codes.NotFound, "no such service")
	case "headers":
		grpc.SetHeader(ctx, metadata.Pairs("x-request-id", "r1"))
		grpc.SetTrailer(ctx, metadata.Pairs("retry-after", "3"))
	}
	req.Service = "changed by the handler"
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func newConn(t *testing.T, interceptors ...grpc.UnaryServerInterceptor) (healthpb.HealthClient, *healthServer) {
	t.Helper()
	c := inproc.New(interceptors...)
	srv := &healthServer{}
	healthpb.RegisterHealthServer(c, srv)
	return healthpb.NewHealthClient(c), srv
}

func TestInvokeRunsTheHandlerThroughTheInterceptorsInOrder(t *testing.T) {
	t.Parallel()
	var order []string
	record := func(name string) grpc.UnaryServerInterceptor {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			order = append(order, name+" "+info.FullMethod)
			return handler(ctx, req)
		}
	}
	client, srv := newConn(t, record("outer"), record("middle"), record("inner"))
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer tok")
	req := &healthpb.HealthCheckRequest{Service: "hub"}
	resp, err := client.Check(ctx, req)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("status = %v, want SERVING", resp.GetStatus())
	}
	const method = "/grpc.health.v1.Health/Check"
	want := []string{"outer " + method, "middle " + method, "inner " + method}
	if len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Errorf("interceptors ran %v, want %v", order, want)
	}
	if srv.seen.token != "Bearer tok" || srv.seen.peer != inproc.Network || srv.seen.method != method {
		t.Errorf("handler saw token %q, peer %q, method %q; want the outgoing metadata, %q and %q",
			srv.seen.token, srv.seen.peer, srv.seen.method, inproc.Network, method)
	}
	if req.GetService() != "hub" {
		t.Errorf("the caller's request became %q: the handler must get its own copy", req.GetService())
	}
}

func TestInvokeDeliversHeadersTrailersAndPeer(t *testing.T) {
	t.Parallel()
	client, _ := newConn(t)
	var header, trailer metadata.MD
	var p peer.Peer
	if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "headers"},
		grpc.Header(&header), grpc.Trailer(&trailer), grpc.Peer(&p)); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if got := header.Get("x-request-id"); len(got) != 1 || got[0] != "r1" {
		t.Errorf("header x-request-id = %v, want [r1]", got)
	}
	if got := trailer.Get("retry-after"); len(got) != 1 || got[0] != "3" {
		t.Errorf("trailer retry-after = %v, want [3]", got)
	}
	if p.Addr == nil || p.Addr.Network() != inproc.Network {
		t.Errorf("peer = %v, want the in-process address", p.Addr)
	}
}

func TestInvokeErrorsAreStatuses(t *testing.T) {
	t.Parallel()
	client, _ := newConn(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		service string
		want    codes.Code
	}{
		{"status passes through", context.Background(), "not-found", codes.NotFound},
		{"plain error is Unknown", context.Background(), "plain-error", codes.Unknown},
		{"cancelled before the call", cancelled, "hub", codes.Canceled},
		{"invalid UTF-8 is refused as by the encoder", context.Background(), "\xff\xfe", codes.Internal},
	} {
		_, err := client.Check(tc.ctx, &healthpb.HealthCheckRequest{Service: tc.service})
		if got := status.Code(err); got != tc.want {
			t.Errorf("%s: code %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestUnservedCallsAreUnimplemented(t *testing.T) {
	t.Parallel()
	client, _ := newConn(t)
	if _, err := client.List(context.Background(), &healthpb.HealthListRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("List (not implemented by the server): %v, want Unimplemented", err)
	}
	if _, err := client.Watch(context.Background(), &healthpb.HealthCheckRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("Watch (streaming): %v, want Unimplemented", err)
	}
	c := inproc.New()
	if err := c.Invoke(context.Background(), "/no.Such/Method", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method: %v, want Unimplemented", err)
	}
}
