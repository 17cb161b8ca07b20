package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodexHookHashIsCodexs: the keys and hashes are those Codex 0.171.0
// itself reported for these hooks (`codex app-server`, hooks/list, with
// CODEX_HOME=/tmp/hx/h2/ch): time-outs unset and 0 normalized, a quoted
// command with a tab, non-ASCII and characters HTML escapes.
func TestCodexHookHashIsCodexs(t *testing.T) {
	hooksJSON := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"'/opt/my hub/hub' hook codex Stop --addr \"[::1]:7700\" --token-file /t/é\tx.token","timeout":5}]}],
"SessionStart":[{"hooks":[{"type":"command","command":"true"}]},{"hooks":[{"type":"command","command":"echo a","timeout":0},{"type":"command","command":"/usr/bin/hub hook codex SessionStart <&>","timeout":5}]}],
"PostToolUse":[{"hooks":[{"type":"command","command":"/tmp/hx/hub hook codex PostToolUse --addr 127.0.0.1:17710 --token-file /tmp/hx/home/agent.token","timeout":5}]}],
"PermissionRequest":[{"hooks":[{"type":"command","command":"/tmp/hx/hub hook codex PermissionRequest --addr 127.0.0.1:17710 --token-file /tmp/hx/home/agent.token --approval-wait 1m0s","timeout":70}]}]}}`
	want := map[string]string{
		"/tmp/hx/h2/ch/hooks.json:stop:0:0":               "sha256:6b782ed4c7128c7c1e9573f84ffcb3e938ce560ddc2b81f296f1cacf7f512144",
		"/tmp/hx/h2/ch/hooks.json:session_start:0:0":      "sha256:696abd07fc74736ff2d809abef82925e1ea697cd2e547d73317c677b0d407441",
		"/tmp/hx/h2/ch/hooks.json:session_start:1:0":      "sha256:6a09ec1c69c1ec33075e2a55f2f2fac3050b1284a6ccf8b596dbc2ef04819d18",
		"/tmp/hx/h2/ch/hooks.json:session_start:1:1":      "sha256:5be5fd6acdd4145b7c80f7eb44e8c373ee08adbe932f9cf29ff911611a38f646",
		"/tmp/hx/h2/ch/hooks.json:post_tool_use:0:0":      "sha256:b9f70ac7dc4769307e0cc1c729a769694789c4a2123df48eb6310deeeb2badd9",
		"/tmp/hx/h2/ch/hooks.json:permission_request:0:0": "sha256:0c52ef5429faa1a43a079c31501428ee8b400806660479cf44f2682f87cf8c5e",
	}
	root, err := parseObject([]byte(hooksJSON))
	if err != nil {
		t.Fatal(err)
	}
	got := findHubHooks(root, "/tmp/hx/h2/ch/hooks.json", func(string) bool { return true })
	if len(got) != len(want) {
		t.Fatalf("%d hooks, want %d: %+v", len(got), len(want), got)
	}
	for _, h := range got {
		if w, ok := want[h.Key]; !ok || h.Hash != w {
			t.Errorf("%s: hash %s, want %q (Codex's)", h.Key, h.Hash, w)
		}
	}
}

// TestSetupCodexTrustsItsHooks: setup writes the trust of the hub's hooks
// into the user's config.toml under the keys Codex uses (CODEX_HOME with
// its links resolved), keeps the user's own hooks where they are and
// their trust as it is, and replaces the trust an earlier setup wrote.
func TestSetupCodexTrustsItsHooks(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "codex-home")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(real, "hooks.json")
	userKey := file + ":stop:1:0"
	hooks := `{"hooks": {"Stop": [
  {"hooks": [{"type": "command", "command": "/old/bin/hub hook codex Stop --addr x", "timeout": 5}]},
  {"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}
]}}`
	config := "model = \"o3\"\n\n[hooks.state]\n\"" + file + ":stop:0:0\" = { trusted_hash = \"sha256:stale\" }\n\n" +
		"[hooks.state.\"" + userKey + "\"]\ntrusted_hash = \"sha256:users\"\n"
	if err := os.WriteFile(filepath.Join(real, "hooks.json"), []byte(hooks), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Host: "codex", Home: t.TempDir(), ConfigDir: link, HubPath: "/opt/hub/bin/hub", Addr: "127.0.0.1:7700", TokenFile: "/t/dev.token"}
	apply(t, o)
	toml := string(mustRead(t, filepath.Join(real, "config.toml")))
	stop := o.hookCommand("Stop")
	want := "[hooks.state.\"" + file + ":stop:0:0\"]\ntrusted_hash = \"" + codexHookHash("Stop", stop, 5) + "\"\n"
	if !strings.Contains(toml, want) || strings.Contains(toml, "stale") {
		t.Errorf("config.toml =\n%s\nwant the hub's Stop hook, in place of the earlier one, trusted:\n%s", toml, want)
	}
	if !strings.Contains(toml, "[hooks.state.\""+userKey+"\"]\ntrusted_hash = \"sha256:users\"") {
		t.Errorf("the user's own hook lost its trust:\n%s", toml)
	}
	if n := strings.Count(toml, "trusted_hash"); n != len(hookEvents["codex"])+1 {
		t.Errorf("%d trusted hashes, want one per hub hook and the user's:\n%s", n, toml)
	}
	if c := hookCommands(readJSON(t, file), "Stop"); len(c) != 2 || c[0] != stop || c[1] != "notify-send done" {
		t.Errorf("Stop hooks = %q, want the hub's in place of the earlier one, then the user's", c)
	}
	checkIdempotent(t, o)

	// A project's hooks are trusted in the user's config, never the project's.
	proj := t.TempDir()
	o.Project = proj
	apply(t, o)
	toml = string(mustRead(t, filepath.Join(real, "config.toml")))
	if !strings.Contains(toml, "[hooks.state.\""+filepath.Join(proj, ".codex", "hooks.json")+":stop:0:0\"]") {
		t.Errorf("the user's config lacks the trust of the project's hooks:\n%s", toml)
	}
	if p := string(mustRead(t, filepath.Join(proj, ".codex", "config.toml"))); strings.Contains(p, "hooks.state") {
		t.Errorf("the project's config.toml got hook trust (Codex reads it from the user's only):\n%s", p)
	}
	checkIdempotent(t, o)
}
