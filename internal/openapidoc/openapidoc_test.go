package openapidoc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/openapidoc"
	"github.com/getkin/kin-openapi/openapi3"
)

const dir = "../gateway/openapi"

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The committed document is what the generator makes of the committed
// Swagger document and extra routes.
func TestCommittedDocumentIsCurrent(t *testing.T) {
	t.Parallel()
	want, err := openapidoc.Convert(read(t, "hub.swagger.json"), read(t, "extra.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(read(t, "hub.openapi.json"), want) {
		t.Fatal("internal/gateway/openapi/hub.openapi.json is not what the protos make: run go run ./scripts/gen-openapi3 (after buf generate) and commit it")
	}
}

// The document is a valid OpenAPI 3 document (kin-openapi's validator,
// once the hub has filled in its version) with the product's title, a
// bearer scheme and every route the hub serves.
func TestDocument(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(read(t, "hub.openapi.json"), &doc); err != nil {
		t.Fatal(err)
	}
	doc["info"].(map[string]any)["version"] = "v9.9.9"
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("load the served document: %v", err)
	}
	if err := loaded.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3: %v", err)
	}
	if got := loaded.OpenAPI; !strings.HasPrefix(got, "3.") {
		t.Errorf("openapi = %q, want 3.x", got)
	}
	if got, want := loaded.Info.Title, "Agent Hub API"; got != want {
		t.Errorf("title = %q, want %q", got, want)
	}
	if got, want := loaded.Info.Version, "v9.9.9"; got != want {
		t.Errorf("version = %q, want %q", got, want)
	}
	s := loaded.Components.SecuritySchemes["bearer"]
	if s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
		t.Errorf("security scheme bearer = %+v, want http bearer", s)
	}
	for _, p := range []string{
		"/", "/docs", "/openapi.json", "/healthz", "/readyz", "/metrics", "/mcp", "/v1/admin/stream",
		"/v1/messages", "/v1/messages:wait", "/v1/admin/agents", "/v1/admin/agents/{name}/deep-work:end",
		"/v1/admin/agent-overviews", "/v1/admin/channels", "/v1/admin/agents/{name}/activity", "/v1/admin/agents/{agent}/pulse",
	} {
		if loaded.Paths.Value(p) == nil {
			t.Errorf("no path %s", p)
		}
	}
	for path := range loaded.Paths.Map() {
		if strings.Contains(path, "{") && strings.Contains(path, ".") {
			t.Errorf("path %s has a dotted parameter", path)
		}
	}
	// Descriptions come from the proto comments.
	op := loaded.Paths.Value("/v1/admin/agents/{name}/deep-work:end").Post
	if op == nil || !strings.Contains(op.Summary+op.Description, "ends an agent's active deep work") {
		t.Errorf("EndDeepWork's description is not its proto comment: %+v", op)
	}
	if loaded.Paths.Value("/healthz").Get.Security == nil || len(*loaded.Paths.Value("/healthz").Get.Security) != 0 {
		t.Errorf("/healthz must need no token")
	}
}
