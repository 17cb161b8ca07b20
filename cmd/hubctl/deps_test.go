package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHubctlIsAPIClientOnly keeps hubctl a pure API client: it must not link
// the domain, the server, a store or cgo SQLite.
func TestHubctlIsAPIClientOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/agenthub/hub/internal/hub",
		"github.com/agenthub/hub/internal/app",
		"github.com/agenthub/hub/internal/server",
		"github.com/agenthub/hub/internal/orchestrator",
		"github.com/agenthub/hub/internal/store",
		"github.com/mattn/go-sqlite3",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("hubctl depends on %s; it must reach the hub only through its API", dep)
			}
		}
	}
}
