package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

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
func addTool[In, Out any](s *mcp.Server, b *bridge, t *mcp.Tool, shape func(map[string]*jsonschema.Schema), h handler[In, Out]) {
	t.InputSchema = inputSchema[In](shape)
	mcp.AddTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		msg, out, err := h(ctx, req, in)
		if err != nil {
			return nil, nil, b.hubError(err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, out, nil
	})
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
