package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ID is a message ID, cursor or heartbeat ID as a tool takes it: a JSON
// integer (42) or a string of digits ("42"). Tools return IDs as strings.
// Whether the digits name something is the hub's to say.
type ID string

// UnmarshalJSON accepts a JSON number or string.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = ID(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*id = ""
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("an ID is a number such as 42 or a string of digits such as \"42\"; got %s", b)
	}
	*id = ID(n.String())
	return nil
}

// idSchema is the schema of every ID input.
var idSchema = &jsonschema.Schema{Types: []string{"integer", "string"}}

// inputSchema infers In's schema (ID fields take integers or strings), then
// lets shape add what Go types cannot say: enums, bounds, defaults.
// A list is an "array", not "null or array": every session pays for
// tools/list, and a model never needs to send null for a list it omits.
// Annotations follow the same thrift: a tool carries them only when they
// say something a host can act on — read-only, or an idempotent write.
func inputSchema[In any](shape func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[ID](): idSchema},
	})
	if err != nil {
		panic(fmt.Sprintf("mcpbridge: schema of %T: %v", *new(In), err))
	}
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" && p.Types[1] == "array" {
			p.Type, p.Types = "array", nil
		}
	}
	if shape != nil {
		shape(s.Properties)
	}
	return s
}

// enum restricts a string property to values.
func enum(p *jsonschema.Schema, values ...string) {
	p.Enum = make([]any, len(values))
	for i, v := range values {
		p.Enum[i] = v
	}
}

// bounds sets an integer property's minimum, maximum and default.
func bounds(p *jsonschema.Schema, lo, hi, def int) {
	l, h := float64(lo), float64(hi)
	p.Minimum, p.Maximum = &l, &h
	p.Default = json.RawMessage(strconv.Itoa(def))
}

// handler is a tool's work: it calls the hub with ctx (which carries the
// agent's credentials) and returns the short text and the structured output.
// req is there for the tools that talk back while they work (progress).
type handler[In, Out any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (string, Out, error)

// addTool registers a tool. The input schema is inferred from In and shaped;
// there is no output schema, which would double what every session pays for
// tools/list, but the output travels as structured content beside the text.
// Hub errors are translated once, here.
//
// The tool answers as the SDK's typed mcp.AddTool would (the same checks,
// defaults and error results), but decodes its arguments with
// encoding/json: the SDK's decoder takes a fresh 32 KiB buffer for each of
// the two decodings it makes per call, which was most of the garbage a call
// left behind.
func addTool[In, Out any](s *mcp.Server, b *bridge, t *mcp.Tool, shape func(map[string]*jsonschema.Schema), h handler[In, Out]) {
	schema := inputSchema[In](shape)
	known := slices.Sorted(maps.Keys(schema.Properties))
	// Unknown arguments are refused (decodeArguments), but the schema does
	// not say so: "additionalProperties": false on every tool would cost
	// each session about 500 characters of tools/list.
	schema.AdditionalProperties = nil
	resolved, err := schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("mcpbridge: schema of %s: %v", t.Name, err))
	}
	t.InputSchema = schema
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if err := decodeArguments(req.Params.Arguments, resolved, known, &in); err != nil {
			return toolError(err), nil
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return toolError(err), nil
		}
		msg, out, err := h(ctx, req, in)
		if err != nil {
			return toolError(b.hubError(err)), nil
		}
		structured, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("marshaling output: %w", err)
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: msg}},
			StructuredContent: json.RawMessage(structured),
		}, nil
	})
}

// decodeArguments checks a tool's arguments against its schema, fills in
// the schema's defaults, decodes them into in and refuses an argument the
// tool does not take (known are the ones it does), with the SDK's error
// texts and in its order. As in the SDK, the checked arguments are encoded
// again before decoding, so that in receives exactly what was checked (5.0
// is an integer).
func decodeArguments(args json.RawMessage, resolved *jsonschema.Resolved, known []string, in any) error {
	m := map[string]any{}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &m); err != nil {
			return fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	var v any = m
	if err := resolved.ApplyDefaults(&v); err != nil {
		return fmt.Errorf("validating \"arguments\": applying schema defaults:\n%w", err)
	}
	if err := resolved.Validate(&v); err != nil {
		return fmt.Errorf("validating \"arguments\": %v", err)
	}
	checked, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("validating \"arguments\": marshalling with defaults: %v", err)
	}
	if err := json.Unmarshal(checked, in); err != nil {
		return err
	}
	return checkArguments(m, known)
}

// toolError is the result of a tool call that failed: the model reads err.
func toolError(err error) *mcp.CallToolResult {
	var r mcp.CallToolResult
	r.SetError(err)
	return &r
}

// nullArguments turns a tools/call whose arguments are JSON null into one
// with {}: the SDK applies schema defaults to the decoded arguments, and on
// null it would write into a nil map and panic.
func nullArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil &&
			bytes.Equal(bytes.TrimSpace(r.Params.Arguments), []byte("null")) {
			r.Params.Arguments = json.RawMessage("{}")
		}
		return next(ctx, method, req)
	}
}

// checkArguments refuses an argument the tool does not take, naming the
// ones it does: a misspelt optional argument would otherwise be dropped
// without a word.
func checkArguments(args map[string]any, known []string) error {
	for name := range args {
		if !slices.Contains(known, name) {
			if len(known) == 0 {
				return fmt.Errorf("unknown argument %q: this tool takes none", name)
			}
			return fmt.Errorf("unknown argument %q: this tool takes %s", name, strings.Join(known, ", "))
		}
	}
	return nil
}
