package setup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// object is a JSON object that keeps its keys in the order of the file, so
// that merging into a user's settings changes only what it must.
type object struct {
	keys []string
	vals map[string]any // *object, []any, json.Number, string, bool or nil
}

func newObject() *object { return &object{vals: map[string]any{}} }

// get returns the value under k (nil if none).
func (o *object) get(k string) any { return o.vals[k] }

// set puts v under k, at the end if k is new, in place otherwise.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// child returns the object under k, creating it when k is absent. A value
// of another type under k is an error naming the key: setup does not
// overwrite what it does not understand.
func (o *object) child(k string) (*object, error) {
	switch v := o.vals[k].(type) {
	case *object:
		return v, nil
	case nil:
		if _, ok := o.vals[k]; ok {
			break
		}
		c := newObject()
		o.set(k, c)
		return c, nil
	}
	return nil, fmt.Errorf("%q is not a JSON object: fix it by hand first", k)
}

// parseObject parses a JSON object; empty input is an empty object.
func parseObject(b []byte) (*object, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return newObject(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("the file holds a JSON %T, not an object", v)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON object")
	}
	return o, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := newObject()
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(k.(string), v)
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ']'
		return a, err
	}
	return t, nil
}

// marshal writes v as indented JSON (two spaces, as the hosts write theirs)
// with a final newline.
func marshal(v any) []byte {
	var b bytes.Buffer
	write(&b, v, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func write(b *bytes.Buffer, v any, indent string) {
	in := indent + "  "
	switch v := v.(type) {
	case *object:
		if len(v.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{")
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n" + in)
			writeScalar(b, k)
			b.WriteString(": ")
			write(b, v.vals[k], in)
		}
		b.WriteString("\n" + indent + "}")
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n" + in)
			write(b, e, in)
		}
		b.WriteString("\n" + indent + "]")
	default:
		writeScalar(b, v)
	}
}

func writeScalar(b *bytes.Buffer, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings, numbers, bools and nil always encode
	b.WriteString(strings.TrimSuffix(buf.String(), "\n"))
}
