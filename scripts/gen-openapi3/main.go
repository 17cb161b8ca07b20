// Command gen-openapi3 writes internal/gateway/openapi/hub.openapi.json, the
// OpenAPI 3 document the hub serves, from the Swagger 2 document buf
// generates beside it and the routes in extra.json. Run it from the module
// root after buf generate (make generate does both):
//
//	go run ./scripts/gen-openapi3
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenthub/hub/internal/openapidoc"
)

const dir = "internal/gateway/openapi"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen-openapi3:", err)
		os.Exit(1)
	}
}

func run() error {
	swagger, err := os.ReadFile(filepath.Join(dir, "hub.swagger.json"))
	if err != nil {
		return fmt.Errorf("%w (run it from the module root, after buf generate)", err)
	}
	extra, err := os.ReadFile(filepath.Join(dir, "extra.json"))
	if err != nil {
		return err
	}
	doc, err := openapidoc.Convert(swagger, extra)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "hub.openapi.json"), doc, 0o644)
}
