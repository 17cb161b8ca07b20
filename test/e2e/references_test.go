package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the generated parts of docs/ from the commands' help")

// The regeneration command the failures name.
const regenerate = "go test ./test/e2e -run TestReferences -update"

// TestReferences checks that the CLI reference (docs/cli.md) and the hub's
// flag table (docs/operations.md) are what hubctl's and hub's own help print
// now; with -update it rewrites them.
func TestReferences(t *testing.T) {
	bin := buildBinaries(t)
	help := func(name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		// The defaults that depend on the machine (the data dir under
		// $HOME) print the same everywhere.
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=~", "GOGC=100"}
		cmd.Dir = t.TempDir()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil && ctx.Err() != nil {
			t.Fatalf("%s %q: %v", filepath.Base(name), args, err)
		}
		if out.Len() == 0 {
			t.Fatalf("%s %q printed nothing", filepath.Base(name), args)
		}
		return out.String()
	}

	var ctl strings.Builder
	ctlHelp := help(bin.hubctl, "help")
	fmt.Fprintf(&ctl, "## hubctl\n\n```text\n%s```\n", ctlHelp)
	for _, name := range hubctlCommands(ctlHelp) {
		fmt.Fprintf(&ctl, "\n### hubctl %s\n\n```text\n%s```\n", name, help(bin.hubctl, "help", name))
	}

	var hub strings.Builder
	fmt.Fprintf(&hub, "## hub\n\n```text\n%s```\n", help(bin.hub, "help"))
	for _, sub := range [][]string{{"serve"}, {"mcp"}, {"deliver"}, {"hook"}, {"setup", "claude"}, {"guard"}, {"copy-store"}, {"health"}} {
		text := help(bin.hub, append(sub, "-h")...)
		if sub[0] == "serve" {
			// hub serve -h starts with hub's usage, printed above.
			_, text, _ = strings.Cut(text, "Flags of hub serve:\n")
			text = "Flags of hub serve (as a table: docs/operations.md, \"Hub flags\"):\n" + text
		}
		fmt.Fprintf(&hub, "\n### hub %s\n\n```text\n%s```\n", sub[0], text)
	}

	fmt.Fprintf(&hub, "\n### hub-hook\n\n```text\n%s```\n", help(bin.hubHook, "help"))

	flags := flagTable(t, help(bin.hub, "serve", "-h"))

	checkGenerated(t, filepath.Join("..", "..", "docs", "cli.md"), "hubctl help", ctl.String())
	checkGenerated(t, filepath.Join("..", "..", "docs", "cli.md"), "hub help", hub.String())
	checkGenerated(t, filepath.Join("..", "..", "docs", "operations.md"), "hub serve -h", flags)
}

var commandLine = regexp.MustCompile(`^  (\S+(?: \S+)*?)\s{2,}\S`)

// hubctlCommands returns the command names hubctl help lists, in its order.
func hubctlCommands(help string) []string {
	var names []string
	_, list, _ := strings.Cut(help, "\n\n")
	list, _, _ = strings.Cut(list, "Global flags")
	for _, line := range strings.Split(list, "\n") {
		if m := commandLine.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

var defaultValue = regexp.MustCompile(`^(.*) \(default (.*)\)$`)

// markdownEscaper keeps a flag's usage text as it is in a table cell.
var markdownEscaper = strings.NewReplacer("|", `\|`, "<", `\<`, "*", `\*`)

// flagTable makes a Markdown table of the flags hub serve -h prints
// (flag.PrintDefaults' form: "  -name type" then the usage indented).
func flagTable(t *testing.T, help string) string {
	_, defaults, ok := strings.Cut(help, "Flags of hub serve:\n")
	if !ok {
		t.Fatalf("hub serve -h printed no flags:\n%s", help)
	}
	var b strings.Builder
	b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	var name, usage string
	flush := func() {
		if name == "" {
			return
		}
		usage = strings.TrimSpace(usage)
		def := ""
		if m := defaultValue.FindStringSubmatch(usage); m != nil {
			usage, def = m[1], "`"+strings.Trim(m[2], `"`)+"`"
		}
		usage = markdownEscaper.Replace(usage)
		fmt.Fprintf(&b, "| `--%s` | %s | %s |\n", name, def, usage)
		name, usage = "", ""
	}
	for _, line := range strings.Split(defaults, "\n") {
		switch {
		case strings.HasPrefix(line, "  -"):
			flush()
			head, rest, _ := strings.Cut(strings.TrimPrefix(line, "  -"), "\t")
			name, _, _ = strings.Cut(head, " ")
			usage = rest
		case strings.HasPrefix(line, "    \t"):
			usage += " " + strings.TrimPrefix(line, "    \t")
		}
	}
	flush()
	return b.String()
}

// checkGenerated compares the part of file between "<!-- BEGIN name -->" and
// "<!-- END name -->" with want, or rewrites it under -update.
func checkGenerated(t *testing.T, file, name, want string) {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- BEGIN "+name+" -->\n", "<!-- END "+name+" -->"
	before, rest, ok1 := strings.Cut(string(text), begin)
	got, after, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("%s has no %q … %q markers", file, strings.TrimSpace(begin), end)
	}
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(before+begin+want+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the part made from %q differs from what the commands print now; run: %s", file, name, regenerate)
}
