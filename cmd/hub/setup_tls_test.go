package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSetupCAFingerprintBadInput: a malformed fingerprint is refused
// saying what is expected, before the hub is asked or anything written.
// The join line against a hub with its own CA, across two network
// namespaces, is test/joinnet's.
func TestSetupCAFingerprintBadInput(t *testing.T) {
	t.Parallel()
	env := newSetupEnv(t)
	cmd := exec.Command(builtHub(t), "setup", "claude", "--addr", "127.0.0.1:1", "--join", "ahj_x", "--name", "remote", "--ca-fingerprint", "sha256:abc")
	cmd.Env = append(os.Environ(), "HOME="+env.home, "XDG_CONFIG_HOME="+env.config, "HUB_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "give sha256: and 64 hex digits") {
		t.Fatalf("hub setup with a malformed fingerprint: %v\n%s", err, out)
	}
	for _, dir := range []string{env.home, env.config} {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("the refused setup wrote into %s: %v", dir, entries)
		}
	}
}
