package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersionFromCheckout builds hubctl as `go build` does in a git
// checkout, without -ldflags, and checks that `hubctl version` names the
// checkout's commit and its time, which the Go toolchain recorded.
func TestVersionFromCheckout(t *testing.T) {
	t.Parallel()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (git rev-parse: %v)", err)
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Skip("in a git worktree (.git is a file), where go build records no commit; a clone has a .git directory")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	show := exec.Command("git", "show", "-s", "--format=%cd", "--date=format-local:%Y-%m-%dT%H:%M:%SZ", "HEAD")
	show.Env = append(show.Environ(), "TZ=UTC")
	commitTime, err := show.Output()
	if err != nil {
		t.Fatalf("git show: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "hubctl")
	// -buildvcs=true over a GOFLAGS=-buildvcs=false in the environment.
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("hubctl version: %v", err)
	}
	got := string(out)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "hubctl v0.0.0-") {
		t.Fatalf("hubctl version printed %q, want 4 lines, the first \"hubctl\" and a pseudo-version", got)
	}
	// -dirty when the work tree has changes (as while this is edited).
	commit := strings.TrimSuffix(strings.TrimPrefix(lines[1], "  commit  "), "-dirty")
	if want := strings.TrimSpace(string(head)); commit != want {
		t.Errorf("commit line %q, want the checkout's HEAD %s", lines[1], want)
	}
	if want := "  built   " + strings.TrimSpace(string(commitTime)); lines[2] != want {
		t.Errorf("date line %q, want %q (the commit's time)", lines[2], want)
	}
	if want := "  go      " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH; lines[3] != want {
		t.Errorf("go line %q, want %q", lines[3], want)
	}
}
