package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestOurPackagesInitialiseNothingHeavy keeps the package initialisation of
// our own packages in the hub binary near nothing: every hub hook (each tool
// call of each agent) and every hub guard (each commit) runs the whole
// binary's initialisation before it reads its arguments, so a pattern
// compiled or a table built at package level is paid there, whoever uses it.
// Each of our packages may allocate at most 50 times at start (one regular
// expression with a bounded repetition compiles in about 700); the generated
// descriptors, which protobuf registers at start, are left out. Figures
// from GODEBUG=inittrace=1, which do not move with the machine's load.
func TestOurPackagesInitialiseNothingHeavy(t *testing.T) {
	bin := builtHub(t)
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hub version: %v\n%s", err, stderr.String())
	}
	const most = 50
	seen := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[10] != "allocs" {
			continue
		}
		seen++
		pkg := f[1]
		if !strings.HasPrefix(pkg, "github.com/agenthub/hub/") || strings.HasPrefix(pkg, "github.com/agenthub/hub/gen/") {
			continue
		}
		allocs, err := strconv.Atoi(f[9])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		if allocs > most {
			t.Errorf("%s allocates %d times at package initialisation, over %d: build what it holds at its first use (sync.OnceValue), not at the start of every hub command", pkg, allocs, most)
		}
	}
	if seen == 0 {
		t.Fatalf("GODEBUG=inittrace=1 printed no init line:\n%s", stderr.String())
	}
}

// TestBuiltHubLeavesRequestTracingOut keeps the cut the grpcnotrace build
// tag makes (make build, the release): with it, gRPC leaves its request
// tracing out, and no other package may link golang.org/x/net/trace back
// into the binary every hook run and guard check starts (about 150
// allocations and 90 page faults at start, BENCHMARKS.md).
func TestBuiltHubLeavesRequestTracingOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "grpcnotrace", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, dep := range deps {
		if dep == "golang.org/x/net/trace" {
			t.Errorf("hub built with grpcnotrace still links %s: find what imports it (go list -deps -tags grpcnotrace -f '{{.ImportPath}}: {{.Imports}}' ./cmd/hub)", dep)
		}
	}
}
