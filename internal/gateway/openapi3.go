package gateway

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

// extraPaths documents the routes served beside the gateway (web pages,
// probes, metrics, MCP, the change stream), in OpenAPI 3 form.
//
//go:embed openapi/extra.json
var extraPaths []byte

// OpenAPI3 returns the OpenAPI 3 document of everything the hub serves over
// HTTP: the Swagger 2 document generated from the protos (whose
// descriptions are the proto comments) converted with kin-openapi, titled,
// versioned, with a bearer security scheme and the routes served outside
// the gateway.
func OpenAPI3(version string) (*openapi3.T, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(OpenAPI, &doc2); err != nil {
		return nil, fmt.Errorf("read the generated Swagger document: %w", err)
	}
	doc, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("convert the Swagger document to OpenAPI 3: %w", err)
	}
	doc.Info = &openapi3.Info{
		Title:   "Agent Hub API",
		Version: version,
		Description: "The REST/JSON face of Agent Hub (the gRPC services hub.v1.AgentService and hub.v1.AdminService through grpc-gateway). " +
			"Agent calls (/v1/...) take the agent's token and act as that agent only; admin calls (/v1/admin/...) take the admin token, " +
			"found in admin.token in the hub's data dir. Errors come as {code, message, details} with the gRPC code and a message saying what is wrong.",
	}
	doc.Servers = openapi3.Servers{{URL: "/", Description: "this hub"}}
	if doc.Components == nil {
		doc.Components = &openapi3.Components{}
	}
	doc.Components.SecuritySchemes = openapi3.SecuritySchemes{
		"bearer": &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
			Type: "http", Scheme: "bearer",
			Description: "An agent token for /v1/... agent calls and /mcp; the admin token for /v1/admin/...",
		}},
	}
	doc.Security = openapi3.SecurityRequirements{{"bearer": []string{}}}
	doc.Components.Schemas["ProbeStatus"] = &openapi3.SchemaRef{Value: &openapi3.Schema{
		Type: &openapi3.Types{openapi3.TypeObject},
		Properties: openapi3.Schemas{
			"status": {Value: openapi3.NewStringSchema()},
			"error":  {Value: openapi3.NewStringSchema()},
		},
	}}
	renameDottedParams(doc)
	var extra map[string]*openapi3.PathItem
	if err := json.Unmarshal(extraPaths, &extra); err != nil {
		return nil, fmt.Errorf("read the extra routes: %w", err)
	}
	for path, item := range extra {
		doc.Paths.Set(path, item)
	}
	return doc, nil
}

// renameDottedParams turns path parameters bound to a nested field, such as
// {config.agent}, into plain names ({agent}): the route matches the same
// URLs, and the document reads like the API.
func renameDottedParams(doc *openapi3.T) {
	for path, item := range doc.Paths.Map() {
		if !strings.Contains(path, ".") || !strings.Contains(path, "{") {
			continue
		}
		renamed := path
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value == nil || p.Value.In != "path" || !strings.Contains(p.Value.Name, ".") {
					continue
				}
				short := p.Value.Name[strings.LastIndexByte(p.Value.Name, '.')+1:]
				renamed = strings.ReplaceAll(renamed, "{"+p.Value.Name+"}", "{"+short+"}")
				p.Value.Name = short
			}
		}
		if renamed != path {
			doc.Paths.Delete(path)
			doc.Paths.Set(renamed, item)
		}
	}
}
