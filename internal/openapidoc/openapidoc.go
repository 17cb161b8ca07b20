// Package openapidoc makes the OpenAPI 3 document the hub serves at
// /openapi.json from the Swagger 2 document that buf generates from the
// protos, at generation time (go run ./scripts/gen-openapi3): the hub embeds
// the result, so the converter and its schema compiler are not linked into
// the hub binary, whose every hook and guard run would pay their start-up.
package openapidoc

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

// Convert returns the OpenAPI 3 document of everything the hub serves over
// HTTP: swagger (the Swagger 2 document generated from the protos, whose
// descriptions are the proto comments) converted with kin-openapi, titled,
// with a bearer security scheme, plus extra (the routes served beside the
// gateway, in OpenAPI 3 form), as indented JSON. Its info.version is empty:
// the hub fills in its own version when it serves the document.
func Convert(swagger, extra []byte) ([]byte, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(swagger, &doc2); err != nil {
		return nil, fmt.Errorf("read the generated Swagger document: %w", err)
	}
	doc, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("convert the Swagger document to OpenAPI 3: %w", err)
	}
	doc.Info = &openapi3.Info{
		Title: "Agent Hub API",
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
	var paths map[string]*openapi3.PathItem
	if err := json.Unmarshal(extra, &paths); err != nil {
		return nil, fmt.Errorf("read the extra routes: %w", err)
	}
	for path, item := range paths {
		doc.Paths.Set(path, item)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write the OpenAPI 3 document: %w", err)
	}
	return append(out, '\n'), nil
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
