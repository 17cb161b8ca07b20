package hooklocal

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// gitRepo is a repository in a temporary directory, with git's user and
// configuration of its own.
type gitRepo struct {
	t   *testing.T
	dir string
	env []string
}

func newGitRepo(t *testing.T) gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	r := gitRepo{t: t, dir: t.TempDir(), env: append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")}
	r.git("init", "-q", "-b", "main", ".")
	return r
}

func (r gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (r gitRepo) write(name, body string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// TestIndexStagedAgreesWithGit: wherever the index and HEAD tell, they
// tell what git diff --cached does, and they tell in the cases a commit
// with nothing staged meets: a new repository, after a commit, after a
// reset, after a gc (HEAD in a pack, the branch in packed-refs), on a
// detached HEAD, in a linked worktree. A rename lists both its paths, a
// deletion its path.
func TestIndexStagedAgreesWithGit(t *testing.T) {
	r := newGitRepo(t)
	getenv := func(string) string { return "" }
	check := func(what string, mustKnow bool, want ...string) {
		t.Helper()
		paths, err := StagedPaths(r.dir)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(paths)
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(append([]string{}, paths...), want) {
			t.Errorf("%s: git lists %q staged; the test wants %q", what, paths, want)
		}
		staged, known := indexStaged(r.dir, getenv)
		if mustKnow && !known {
			t.Errorf("%s: indexStaged does not know; want it told by the index", what)
		}
		if known && staged != (len(paths) > 0) {
			t.Errorf("%s: indexStaged says staged %v; git lists %q", what, staged, paths)
		}
	}
	check("a new repository", true)
	r.write("a.go", "package a\n")
	r.write("d/b.go", "package d\n")
	r.git("add", ".")
	check("two files added before the first commit", true, "a.go", "d/b.go")
	r.git("commit", "-q", "-m", "one")
	check("after the first commit", true)
	r.write("a.go", "package a // changed\n")
	r.git("add", "a.go")
	check("a change added", false, "a.go")
	r.git("reset", "-q")
	check("after a reset (git 2.39 leaves the root of the cache-tree out of date)", false)
	r.git("mv", "d/b.go", "d/c.go")
	check("a rename", false, "d/b.go", "d/c.go")
	r.git("commit", "-q", "-m", "two")
	check("after the rename's commit", true)
	r.git("rm", "-q", "d/c.go")
	check("a deletion", false, "d/c.go")
	r.git("commit", "-q", "-m", "three")
	r.git("gc", "-q")
	if _, err := os.Stat(filepath.Join(r.dir, ".git", "refs", "heads", "main")); err == nil {
		t.Fatal("after gc the branch is still a loose ref; the test wants it packed")
	}
	check("after a gc", true)
	r.git("checkout", "-q", "--detach")
	check("a detached HEAD", true)
	r.git("checkout", "-q", "main")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", wt, "-b", "side")
	main := r.dir
	r.dir = wt
	check("a linked worktree", true)
	r.write("e.go", "package e\n")
	r.git("add", "e.go")
	check("a file added in a linked worktree", false, "e.go")
	r.dir = main
	check("the main worktree beside it", true)

	// Another index (GIT_INDEX_FILE, as git commit -a and git commit PATH
	// give their hooks), its cache-tree written as git commit does.
	other := filepath.Join(t.TempDir(), "index")
	withIndex := func(k string) string {
		if k == "GIT_INDEX_FILE" {
			return other
		}
		return ""
	}
	r.env = append(r.env, "GIT_INDEX_FILE="+other)
	r.git("read-tree", "HEAD")
	if staged, known := indexStaged(r.dir, withIndex); staged || !known {
		t.Errorf("another index read from HEAD: staged %v, known %v; want nothing staged, known", staged, known)
	}
	r.write("f.go", "package f\n")
	r.git("add", "f.go")
	r.git("write-tree")
	if staged, known := indexStaged(r.dir, withIndex); !staged || !known {
		t.Errorf("another index with f.go added: staged %v, known %v; want staged, known", staged, known)
	}
	if staged, known := indexStaged(r.dir, getenv); staged || !known {
		t.Errorf("the repository's index beside it: staged %v, known %v; want nothing staged, known", staged, known)
	}
	r.env = r.env[:len(r.env)-1]

	r.git("update-index", "--split-index")
	check("a split index", false)
	if _, known := indexStaged(r.dir, getenv); known {
		t.Error("a split index: indexStaged knows; want git asked (the entries are in the shared index)")
	}
	r.write("g.go", "package g\n")
	r.git("add", "-N", "g.go")
	check("a file to be added (intent to add)", false)
}
