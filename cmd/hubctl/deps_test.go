package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHubctlIsAPIClientOnly keeps hubctl a pure API client: of our
// packages it links only the generated API, the version, the data dir's
// file names, the terminal sanitizer, the loopback test and the hubs' CAs
// kept by hub setup, never the domain, the server, a store or cgo SQLite.
func TestHubctlIsAPIClientOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const ours = "github.com/agenthub/hub/"
	allowed := []string{"gen/", "internal/version", "internal/datadir", "internal/termtext", "internal/loopback", "internal/castore"}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/mattn/go-sqlite3" {
			t.Errorf("hubctl depends on %s; it must reach the hub only through its API", dep)
		}
		rest, mine := strings.CutPrefix(dep, ours)
		if !mine || rest == "cmd/hubctl" {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || rest == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(rest, a))
		}
		if !ok {
			t.Errorf("hubctl depends on %s; it may link only %v of ours and must reach the hub through its API", dep, allowed)
		}
	}
}
