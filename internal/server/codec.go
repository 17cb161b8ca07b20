package server

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Codec is the gRPC server's codec: protobuf, except that a request with
// invalid UTF-8 in a string field is answered InvalidArgument naming the
// field, where gRPC itself answers Internal before any interceptor runs.
// The codec lets such a request through decoding and marks it; the
// interceptor refuses it. Install it with grpc.ForceServerCodecV2.
type Codec struct {
	base encoding.CodecV2
	bad  sync.Map // proto.Message → field path with invalid UTF-8
}

// NewCodec returns the server codec.
func NewCodec() *Codec { return &Codec{base: encoding.GetCodecV2("proto")} }

// Name implements encoding.CodecV2.
func (c *Codec) Name() string { return c.base.Name() }

// Marshal implements encoding.CodecV2.
func (c *Codec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

// Unmarshal implements encoding.CodecV2.
func (c *Codec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.base.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return err
	}
	if field := invalidUTF8Field(data.Materialize(), m.ProtoReflect().Descriptor()); field != "" {
		c.bad.Store(m, field)
		return nil
	}
	return err
}

// check returns InvalidArgument if req was marked by Unmarshal.
func (c *Codec) check(req any) error {
	if c == nil {
		return nil
	}
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	if field, ok := c.bad.LoadAndDelete(m); ok {
		return status.Error(codes.InvalidArgument, fmt.Sprintf("%s is not valid UTF-8: send text encoded as UTF-8", field))
	}
	return nil
}

// invalidUTF8Field returns the path of the first string field of b (a
// message of type md) that is not valid UTF-8, "" if there is none.
func invalidUTF8Field(b []byte, md protoreflect.MessageDescriptor) string {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		if typ != protowire.BytesType || fd == nil {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return ""
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		switch {
		case fd.Kind() == protoreflect.StringKind && !utf8.Valid(v):
			return string(fd.Name())
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			if inner := invalidUTF8Field(v, fd.Message()); inner != "" {
				return string(fd.Name()) + "." + inner
			}
		}
	}
	return ""
}
