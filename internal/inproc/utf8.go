package inproc

import (
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// invalidUTF8 returns the path of the first string in m that is not valid
// UTF-8 ("message.body", "to"), "" if there is none: protobuf's encoder
// refuses such a message, so a call over the network would fail before it
// left the client.
func invalidUTF8(m protoreflect.Message) string {
	var bad string
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if p := invalidUTF8Value(fd, v); p != "" {
			bad = p
			return false
		}
		return true
	})
	return bad
}

func invalidUTF8Value(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	name := string(fd.Name())
	switch {
	case fd.IsList():
		l := v.List()
		for i := 0; i < l.Len(); i++ {
			if !validScalar(fd, l.Get(i)) {
				return name
			}
			if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
				if p := invalidUTF8(l.Get(i).Message()); p != "" {
					return name + "." + p
				}
			}
		}
	case fd.IsMap():
		var bad string
		v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			switch {
			case !validScalar(fd.MapKey(), k.Value()), !validScalar(fd.MapValue(), mv):
				bad = name
			case fd.MapValue().Kind() == protoreflect.MessageKind:
				if p := invalidUTF8(mv.Message()); p != "" {
					bad = name + "." + p
				}
			}
			return bad == ""
		})
		return bad
	case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
		if p := invalidUTF8(v.Message()); p != "" {
			return name + "." + p
		}
	case !validScalar(fd, v):
		return name
	}
	return ""
}

// validScalar reports whether v, a value of fd, is not a string with
// invalid UTF-8.
func validScalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	return fd.Kind() != protoreflect.StringKind || utf8.ValidString(v.String())
}
