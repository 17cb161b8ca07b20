package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var (
	trailingComment = regexp.MustCompile(`\s{2,}#.*$`)
	shownToken      = regexp.MustCompile(`Token \(shown once[^\n]*\n\s+(\S+)`)
)

// TestReadmeTour runs the README's 60-second tour, line by line as written,
// against a fresh hub: "go run ./cmd/hubctl" is the built hubctl, the hub's
// address and data dir come from the environment as on the reader's machine,
// and <alice's token> is the token agent add printed.
func TestReadmeTour(t *testing.T) {
	lines := tourLines(t)
	bin := buildBinaries(t)
	h := startHub(t, bin)
	token := ""
	var all strings.Builder
	for _, line := range lines {
		if strings.Contains(line, "<alice's token>") {
			if token == "" {
				t.Fatalf("tour line %q uses alice's token before agent add alice printed it", line)
			}
			line = strings.ReplaceAll(line, "<alice's token>", token)
		}
		if strings.Contains(line, "<") {
			t.Fatalf("tour line %q has a placeholder the test cannot fill", line)
		}
		script := strings.ReplaceAll(line, "go run ./cmd/hubctl", "'"+bin.hubctl+"'")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, "sh", "-c", script)
		cmd.Env = append(cleanEnv(), "HUB_ADDR="+h.grpcAddr, "HUB_DATA_DIR="+h.dataDir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("tour line %q: %v\n%s", line, err, out.String())
		}
		all.WriteString(out.String())
		if m := shownToken.FindStringSubmatch(out.String()); m != nil && strings.Contains(line, "agent add alice") {
			token = m[1]
		}
		t.Logf("$ %s\n%s", line, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^alice\s+default\s+coder`),              // agent list
		regexp.MustCompile(`(?m)^2\s.*\sbob, #ops\s+deploy done$`),      // messages
		regexp.MustCompile(`(?m)^bob\s+QUEUED`),                         // messages show 2
		regexp.MustCompile(`(?m)^agent:\s+alice\n(?s:.*)^unread:\s+1$`), // alice's status
	} {
		if !want.MatchString(all.String()) {
			t.Errorf("the tour printed nothing matching %s", want)
		}
	}
}

// tourLines returns the command lines of the README's tour block, without
// their comments.
func tourLines(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, tour, ok := strings.Cut(string(readme), "\n## A 60-second tour\n")
	if !ok {
		t.Fatal(`README.md has no "## A 60-second tour" section`)
	}
	_, block, ok := strings.Cut(tour, "\n```sh\n")
	block, _, ok2 := strings.Cut(block, "\n```")
	if !ok || !ok2 {
		t.Fatal("README.md's tour has no ```sh block")
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(trailingComment.ReplaceAllString(l, "")); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) < 5 {
		t.Fatalf("README.md's tour block has %d lines", len(lines))
	}
	return lines
}
