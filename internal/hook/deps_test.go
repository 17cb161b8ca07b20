package hook

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHookPathLinksNoHeavyInit keeps what every tool call (hub hook) and
// every commit (hub guard check) runs free of the packages whose package
// initialisation is heavy or that only the server uses: the OpenAPI
// converter and its JSON-schema compiler (about 21,000 allocations at
// start), Prometheus, YAML, the SQLite driver, and of ours the gateway, the
// server, the stores and the metrics. A binary of the hook and the guard
// alone then starts with about 3,440 allocations where the whole hub's
// start makes about 5,450 (scripts/bench-hook-start.sh, BENCHMARKS.md).
func TestHookPathLinksNoHeavyInit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".", "../guard").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/getkin/kin-openapi/",
		"github.com/santhosh-tekuri/jsonschema/",
		"github.com/prometheus/",
		"go.yaml.in/yaml/",
		"github.com/mattn/go-sqlite3",
		"github.com/agenthub/hub/internal/gateway",
		"github.com/agenthub/hub/internal/server",
		"github.com/agenthub/hub/internal/app",
		"github.com/agenthub/hub/internal/store",
		"github.com/agenthub/hub/internal/metrics",
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) {
				t.Errorf("the hook or the guard depends on %s; a package whose initialisation is heavy or that only the server uses must stay off their path", dep)
			}
		}
	}
}
