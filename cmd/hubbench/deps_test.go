package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHubbenchIsAPIClientOnly keeps hubbench a client of a hub binary: it
// must not link the domain, the server, a store or cgo SQLite, so that what
// it measures is a hub process (the tick scenario seeds its store with the
// hidden `hub bench-seed`, then drives `hub serve`). Its in-process
// profiling benchmarks (profile_test.go) are tests, not the binary.
func TestHubbenchIsAPIClientOnly(t *testing.T) {
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
				t.Errorf("hubbench depends on %s; it must reach the hub only through its API and its binary", dep)
			}
		}
	}
}
