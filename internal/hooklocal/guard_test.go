package hooklocal

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommitSettled: the guard turned off (off, 0, false, any case) and a
// repository with nothing staged settle the check here; a directory that
// is no repository settles it with a warning (the commit goes through);
// staged paths are left to the hub, all of them.
func TestCommitSettled(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == Override {
				return v
			}
			return ""
		}
	}
	git("init", "-q", ".")
	var stderr bytes.Buffer
	if paths, settled := CommitSettled(repo, env(""), &stderr); !settled || paths != nil || stderr.Len() != 0 {
		t.Errorf("nothing staged: %q, settled %v, stderr %q; want settled, silently", paths, settled, stderr.String())
	}
	for _, f := range []string{"a.go", "b b.md"} {
		if err := os.WriteFile(filepath.Join(repo, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	if paths, settled := CommitSettled(repo, env("on"), &stderr); settled || !slices.Equal(paths, []string{"a.go", "b b.md"}) {
		t.Errorf("two files staged: %q, settled %v; want both, for the hub", paths, settled)
	}
	for _, v := range []string{"off", "OFF", "0", "false"} {
		if _, settled := CommitSettled(repo, env(v), &stderr); !settled {
			t.Errorf("%s=%s: not settled; want the guard off", Override, v)
		}
	}
	if _, settled := CommitSettled(t.TempDir(), env(""), &stderr); !settled || !strings.Contains(stderr.String(), "hub guard: warning: git diff --cached") || !strings.Contains(stderr.String(), "commit allowed") {
		t.Errorf("no repository: settled %v, stderr %q; want settled with a warning", settled, stderr.String())
	}
}
