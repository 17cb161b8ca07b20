// Package inproc calls gRPC services in the same process without gRPC's
// transport: a Conn is both where services are registered (like a
// grpc.Server) and a client connection to them (like a grpc.ClientConn), so
// generated clients work on it unchanged.
//
// A call runs the registered method handler directly, through the same
// chain of unary server interceptors a grpc.Server would run, on the
// caller's goroutine: no HTTP/2 framing, no protobuf encoding, no
// connection. What a handler sees is what it would see over the network:
//
//   - the caller's outgoing metadata as incoming metadata, its deadline and
//     cancellation through the context;
//   - a peer whose address is Addr;
//   - grpc.SetHeader, grpc.SetTrailer and grpc.Method work, and the headers
//     and trailers reach the caller's grpc.Header and grpc.Trailer options;
//   - its own copy of the request (the caller keeps ownership of its own),
//     refused as a client's encoder would refuse it when a string is not
//     valid UTF-8.
//
// Errors reach the caller as gRPC status errors, as they would over the
// network. Only unary methods are served: NewStream answers Unimplemented.
package inproc

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Network is the network name of Addr.
const Network = "inproc"

// Addr is the peer address handlers see on a call made through a Conn.
var Addr = addr{}

type addr struct{}

func (addr) Network() string { return Network }
func (addr) String() string  { return Network }

var inprocPeer = &peer.Peer{Addr: Addr, LocalAddr: Addr}

// Conn serves the services registered on it to the calls made on it.
// Register every service before the first call.
type Conn struct {
	intercept grpc.UnaryServerInterceptor // nil: none
	methods   map[string]method           // by full method name, "/pkg.Service/Method"
}

type method struct {
	srv     any
	handler grpc.MethodHandler
}

var (
	_ grpc.ClientConnInterface = (*Conn)(nil)
	_ grpc.ServiceRegistrar    = (*Conn)(nil)
)

// New returns a Conn that runs interceptors around every call, the first
// outermost, as grpc.ChainUnaryInterceptor does.
func New(interceptors ...grpc.UnaryServerInterceptor) *Conn {
	return &Conn{intercept: Chain(interceptors...), methods: map[string]method{}}
}

// RegisterService implements grpc.ServiceRegistrar: impl serves the unary
// methods of desc. It panics if impl does not implement desc's interface
// or a method is registered twice, as grpc.Server does.
func (c *Conn) RegisterService(desc *grpc.ServiceDesc, impl any) {
	if impl == nil {
		panic(fmt.Sprintf("inproc: RegisterService(%s) with a nil implementation", desc.ServiceName))
	}
	if want := reflect.TypeOf(desc.HandlerType).Elem(); !reflect.TypeOf(impl).Implements(want) {
		panic(fmt.Sprintf("inproc: RegisterService(%s): %T does not implement %v", desc.ServiceName, impl, want))
	}
	for _, m := range desc.Methods {
		name := "/" + desc.ServiceName + "/" + m.MethodName
		if _, dup := c.methods[name]; dup {
			panic("inproc: method registered twice: " + name)
		}
		c.methods[name] = method{srv: impl, handler: m.Handler}
	}
}

// Invoke implements grpc.ClientConnInterface: it calls the handler of
// fullMethod with a copy of args and moves its response into reply.
func (c *Conn) Invoke(ctx context.Context, fullMethod string, args, reply any, opts ...grpc.CallOption) error {
	m, ok := c.methods[fullMethod]
	if !ok {
		return status.Errorf(codes.Unimplemented, "unknown method %s", fullMethod)
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	in, ok := args.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "inproc: request %T is not a protobuf message", args)
	}
	if field := invalidUTF8(in.ProtoReflect()); field != "" {
		// What gRPC's proto encoder answers for such a request.
		return status.Errorf(codes.Internal, "grpc: error while marshaling: string field contains invalid UTF-8 (%s)", field)
	}
	out, ok := reply.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "inproc: reply %T is not a protobuf message", reply)
	}

	md, _ := metadata.FromOutgoingContext(ctx)
	st := &stream{method: fullMethod}
	sctx := metadata.NewIncomingContext(ctx, md)
	sctx = peer.NewContext(sctx, inprocPeer)
	sctx = grpc.NewContextWithServerTransportStream(sctx, st)
	dec := func(v any) error {
		proto.Merge(v.(proto.Message), in)
		return nil
	}
	resp, err := m.handler(m.srv, sctx, dec, c.intercept)
	st.deliver(opts)
	if err != nil {
		if _, isStatus := status.FromError(err); !isStatus {
			if ctx.Err() != nil {
				return status.FromContextError(ctx.Err()).Err()
			}
			// A grpc.Server answers Unknown for an error that is not a status.
			return status.Error(codes.Unknown, err.Error())
		}
		return err
	}
	res, ok := resp.(proto.Message)
	if !ok || res == nil {
		// What a grpc.Server answers when it cannot encode the response.
		return status.Errorf(codes.Internal, "grpc: error while marshaling: the handler of %s returned %T", fullMethod, resp)
	}
	move(out, res)
	return nil
}

// NewStream implements grpc.ClientConnInterface. Streaming methods are not
// served in process.
func (c *Conn) NewStream(_ context.Context, _ *grpc.StreamDesc, fullMethod string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Errorf(codes.Unimplemented, "%s: streaming calls are not served in process", fullMethod)
}

// move makes dst hold src's fields. src was built for this call and is
// dropped after it, so its fields are handed over rather than copied.
func move(dst, src proto.Message) {
	d, s := dst.ProtoReflect(), src.ProtoReflect()
	if d.Descriptor() != s.Descriptor() {
		proto.Reset(dst)
		proto.Merge(dst, src) // panics with the mismatch, as a bug should
		return
	}
	s.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		d.Set(fd, v)
		return true
	})
	if u := s.GetUnknown(); len(u) > 0 {
		d.SetUnknown(u)
	}
}

// stream is the grpc.ServerTransportStream of one call: it keeps the
// headers and trailers the handler sets for the caller's call options.
type stream struct {
	method string

	mu      sync.Mutex
	header  metadata.MD
	trailer metadata.MD
}

func (s *stream) Method() string { return s.method }

func (s *stream) SetHeader(md metadata.MD) error {
	s.mu.Lock()
	s.header = metadata.Join(s.header, md)
	s.mu.Unlock()
	return nil
}

func (s *stream) SendHeader(md metadata.MD) error { return s.SetHeader(md) }

func (s *stream) SetTrailer(md metadata.MD) error {
	s.mu.Lock()
	s.trailer = metadata.Join(s.trailer, md)
	s.mu.Unlock()
	return nil
}

// deliver hands the headers and trailers to the call options that asked
// for them.
func (s *stream) deliver(opts []grpc.CallOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = s.header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = s.trailer
		case grpc.PeerCallOption:
			*o.PeerAddr = *inprocPeer
		}
	}
}

// Chain makes one interceptor of several, the first outermost, as
// grpc.ChainUnaryInterceptor does (nil for none).
func Chain(interceptors ...grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	switch len(interceptors) {
	case 0:
		return nil
	case 1:
		return interceptors[0]
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return interceptors[0](ctx, req, info, next(interceptors[1:], info, handler))
	}
}

// next is the handler the interceptor before rest calls.
func next(rest []grpc.UnaryServerInterceptor, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) grpc.UnaryHandler {
	if len(rest) == 0 {
		return handler
	}
	return func(ctx context.Context, req any) (any, error) {
		return rest[0](ctx, req, info, next(rest[1:], info, handler))
	}
}
