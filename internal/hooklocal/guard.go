package hooklocal

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Override is the environment variable that turns the guard off for one
// commit: HUB_GUARD=off git commit … (git commit --no-verify skips every hook).
const Override = "HUB_GUARD"

// CommitSettled decides a guard check that needs no hub: the guard turned
// off (Override), nothing staged, or git failing (allowed, with a warning
// on stderr). settled false: paths are the staged paths, and the hub must
// say whether another agent holds them. Git is asked for them only when
// the index does not show that nothing is staged (indexStaged).
func CommitSettled(dir string, getenv func(string) string, stderr io.Writer) (paths []string, settled bool) {
	if GuardOff(getenv) {
		return nil, true
	}
	if staged, known := indexStaged(dir, getenv); known && !staged {
		return nil, true
	}
	paths, err := StagedPaths(dir)
	if err != nil {
		fmt.Fprintf(stderr, "hub guard: warning: %v; commit allowed without checking reservations\n", err)
		return nil, true
	}
	return paths, len(paths) == 0
}

// GuardOff reports whether the environment turns the guard off
// (Override: off, 0 or false, any case).
func GuardOff(getenv func(string) string) bool {
	v := strings.ToLower(getenv(Override))
	return v == "off" || v == "0" || v == "false"
}

// StagedPaths returns the paths staged for commit in the repository at dir
// (added, changed and deleted; a rename as both its paths, the one it
// leaves and the one it makes: `git diff --cached --name-only
// --no-renames`).
func StagedPaths(dir string) ([]string, error) {
	out, err := Git(dir, "diff", "--cached", "--name-only", "--no-renames", "-z")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// Git runs git in dir and returns its standard output.
func Git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
