package dashboard

import (
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// appendRow appends the JSON of m as the REST API writes it (protojson with
// the proto names: 64-bit integers quoted, enums by name, timestamps in
// RFC 3339, fields left out when empty), without protojson's cost: it
// sorts each message's fields and allocates some twenty times for a change
// of two fields, which made it most of what the rows' goroutine spent on
// an event. The fields come in the order the message holds them, which
// JSON does not mind. A message of a kind it does not write (maps, well-
// known types but the timestamp, floats) goes through protojson.
func appendRow(b []byte, m protoreflect.Message) ([]byte, error) {
	start := len(b)
	if out, ok := appendMessage(b, m); ok {
		return out, nil
	}
	return rowJSON.MarshalAppend(b[:start], m.Interface())
}

var timestampName = (&timestamppb.Timestamp{}).ProtoReflect().Descriptor().FullName()

// appendMessage appends m's JSON; ok is false when m holds what it does not
// write (b is then to be cut back).
func appendMessage(b []byte, m protoreflect.Message) (_ []byte, ok bool) {
	if m.Descriptor().FullName() == timestampName {
		return appendTimestamp(b, m)
	}
	if m.Descriptor().FullName().Parent() == "google.protobuf" {
		return b, false
	}
	b = append(b, '{')
	first := true
	// Field by field rather than by m.Range, whose function would put
	// what it writes to on the heap for each message.
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		if fd.IsMap() {
			return b, false
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, fd.Name()...)
		b = append(b, '"', ':')
		v := m.Get(fd)
		if !fd.IsList() {
			if b, ok = appendValue(b, fd, v); !ok {
				return b, false
			}
			continue
		}
		l := v.List()
		b = append(b, '[')
		for i := range l.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendValue(b, fd, l.Get(i)); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

// appendValue appends one value of field fd (an element, for a list).
func appendValue(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) ([]byte, bool) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return appendString(b, v.String()), true
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool()), true
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(b, v.Int(), 10), true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(b, v.Uint(), 10), true
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return append(strconv.AppendInt(append(b, '"'), v.Int(), 10), '"'), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return append(strconv.AppendUint(append(b, '"'), v.Uint(), 10), '"'), true
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return append(append(append(b, '"'), ev.Name()...), '"'), true
		}
		return strconv.AppendInt(b, int64(v.Enum()), 10), true
	case protoreflect.MessageKind:
		return appendMessage(b, v.Message())
	}
	return b, false
}

// appendTimestamp writes a timestamp as protojson does: UTC, with 0, 3, 6
// or 9 digits of the second's fraction.
func appendTimestamp(b []byte, m protoreflect.Message) ([]byte, bool) {
	fields := m.Descriptor().Fields()
	secs, nanos := m.Get(fields.ByNumber(1)).Int(), m.Get(fields.ByNumber(2)).Int()
	const minSecs, maxSecs = -62135596800, 253402300799 // years 1 and 9999, as protojson checks
	if secs < minSecs || secs > maxSecs || nanos < 0 || nanos >= 1e9 {
		return b, false // protojson tells what is wrong
	}
	b = time.Unix(secs, nanos).UTC().AppendFormat(append(b, '"'), "2006-01-02T15:04:05.000000000")
	for _, zeros := range []string{"000", "000", ".000"} { // 9 digits → 6 → 3 → none
		if n := len(b) - len(zeros); string(b[n:]) == zeros {
			b = b[:n]
		}
	}
	return append(b, 'Z', '"'), true
}

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, and a byte that is not UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < ' ':
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}
