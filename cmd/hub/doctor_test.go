package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorReportsHooksAHostSkips: hub doctor reads the hosts' configs
// under HOME and reports the hub's hooks a host would skip, with the fix,
// and fails; the hosts without hub hooks are named once.
func TestDoctorReportsHooksAHostSkips(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"} {
		t.Setenv(v, "")
	}
	bin := filepath.Join(home, "bin", "hub")
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Codex hooks written by hand: never trusted.
	hooks := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "` + bin + ` hook codex Stop", "timeout": 5}]}]}}`
	if err := os.WriteFile(filepath.Join(home, ".codex", "hooks.json"), []byte(hooks), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := runDoctor([]string{"--project", t.TempDir()}, &out, &errb)
	if err == nil || !strings.Contains(out.String(), "[fail] codex   Codex skips the hub's Stop hooks: not trusted in "+filepath.Join(home, ".codex", "config.toml")) ||
		!strings.Contains(out.String(), "fix: run hub setup codex (it trusts the hooks it writes)") {
		t.Errorf("hub doctor: %v\n%s\nwant the untrusted Codex hook failed, with its fix", err, out.String())
	}
	if !strings.Contains(out.String(), "[skip] no hub hooks for claude, gemini") {
		t.Errorf("hub doctor lacks the hosts without hub hooks:\n%s", out.String())
	}
}
