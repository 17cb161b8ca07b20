package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNothingHeavy keeps hub-hook what it is for: a binary whose
// start is the Go runtime's and little more. Go initialises every package
// a binary links, and in hub most of a start is the initialisation of
// gRPC, the generated API's descriptors, the MCP SDK and its JSON schema,
// and Prometheus (scripts/bench-hook-start.sh): none of them, nor our
// packages that link them, may come in.
func TestLinksNothingHeavy(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"google.golang.org/grpc",
		"google.golang.org/protobuf/",
		"github.com/modelcontextprotocol/",
		"github.com/google/jsonschema-go/",
		"github.com/prometheus/",
		"net/http",
		"github.com/agenthub/hub/gen/",
		"github.com/agenthub/hub/internal/hub",
		"github.com/agenthub/hub/internal/hook",
		"github.com/agenthub/hub/internal/guard",
		"github.com/agenthub/hub/internal/mcpbridge",
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) && (strings.HasSuffix(f, "/") || strings.HasPrefix(dep, f+"/")) {
				t.Errorf("hub-hook links %s; what its runs answer needs only the bridge's socket, git and the hub beside it", dep)
			}
		}
	}
}
