package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompletionBashCompletesEveryLevel(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	r := (*testHub)(nil).hubctl(t, nil, "completion", "bash")
	if r.code != 0 {
		t.Fatalf("completion bash: exit %d: %s", r.code, r.stderr)
	}
	script := filepath.Join(t.TempDir(), "hubctl.bash")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string // the words typed, the last one being completed
		want string
	}{
		{"hubctl ag", "agent"},
		{"hubctl --addr x agent to", "token"},
		{"hubctl agent token r", "revoke rotate"},
		{"hubctl cron ru", "run runs"},
		{"hubctl --tl", "--tls --tls-ca"},
		{"hubctl completion z", ""}, // not a command word: bash falls back to files
	}
	for _, tt := range tests {
		words := strings.Fields(tt.line)
		cmd := exec.Command("bash", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hubctl; echo "${COMPREPLY[*]}"`,
			"bash", script)
		cmd.Args = append(cmd.Args, words...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tt.line, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tt.want {
			t.Errorf("%q completes to %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestCompletionZshAndFish(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{
		"zsh":  "complete -o default -F _hubctl hubctl",
		"fish": `complete -c hubctl -n "__fish_seen_subcommand_from token" -a "rotate"`,
	} {
		r := (*testHub)(nil).hubctl(t, nil, "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("completion %s: exit %d, output lacks %q:\n%s", shell, r.code, want, r.stdout)
		}
	}
	if r := (*testHub)(nil).hubctl(t, nil, "completion", "tcsh"); r.code != 2 {
		t.Errorf("completion tcsh: exit %d, want 2", r.code)
	}
}
