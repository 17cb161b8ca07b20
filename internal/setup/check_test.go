package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkRig is a host set up by Plan and Apply for a project, with a hub
// binary that exists.
func checkRig(t *testing.T, host string) Options {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hub")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{Host: host, Home: t.TempDir(), Project: t.TempDir(), HubPath: bin, Addr: "127.0.0.1:7700", TokenFile: "/t/dev.token"}
	apply(t, o)
	return o
}

// problems runs Check and returns its problems (and fixes), one a line.
func problems(t *testing.T, o Options, env map[string]string) string {
	t.Helper()
	var out []string
	for _, f := range Check(o, func(k string) string { return env[k] }) {
		if f.Host != o.Host {
			t.Errorf("finding of host %q, want %q", f.Host, o.Host)
		}
		if f.Problem != "" {
			out = append(out, f.Problem+" | fix: "+f.Fix)
		}
	}
	return strings.Join(out, "\n")
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantProblem(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("problems:\n%s\nwant one with %q", got, w)
		}
	}
}

func TestCheckNothingSetUp(t *testing.T) {
	for _, host := range Hosts {
		if f := Check(Options{Host: host, Home: t.TempDir(), Project: t.TempDir()}, func(string) string { return "" }); len(f) != 0 {
			t.Errorf("%s: %+v, want nothing for a host without the hub's hooks", host, f)
		}
	}
}

func TestCheckClaude(t *testing.T) {
	o := checkRig(t, "claude")
	if got := problems(t, o, nil); got != "" {
		t.Fatalf("fresh setup: %s", got)
	}
	local := filepath.Join(o.Project, ".claude", "settings.local.json")
	writeFile(t, local, `{"disableAllHooks": true}`)
	wantProblem(t, problems(t, o, nil), local+" sets disableAllHooks", `fix: remove "disableAllHooks": true from `+local)

	// The binary the hooks run is gone.
	os.Remove(local)
	os.Remove(o.HubPath)
	wantProblem(t, problems(t, o, nil), o.HubPath+", which is not an executable file", "fix: run hub setup claude --project "+o.Project)
}

// Hooks that run hub-hook need the hub beside it.
func TestCheckHubHookNeedsTheHub(t *testing.T) {
	o := checkRig(t, "claude")
	o.HookPath = filepath.Join(filepath.Dir(o.HubPath), "hub-hook")
	writeFile(t, o.HookPath, "#!/bin/sh\n")
	if err := os.Chmod(o.HookPath, 0o755); err != nil {
		t.Fatal(err)
	}
	apply(t, o)
	if got := problems(t, o, nil); got != "" {
		t.Fatalf("hub-hook beside the hub: %s", got)
	}
	os.Remove(o.HubPath)
	wantProblem(t, problems(t, o, nil), o.HookPath+", with no hub binary beside it", "fix: install hub and hub-hook in one directory")
}

func TestCheckGemini(t *testing.T) {
	o := checkRig(t, "gemini")
	trust := filepath.Join(o.Home, ".gemini", "trustedFolders.json")
	wantProblem(t, problems(t, o, nil), o.Project+" is not a trusted folder", "fix: start gemini in "+o.Project, trust)
	// Trusted by a parent's rule, or by the environment.
	writeFile(t, trust, `{"`+filepath.Join(filepath.Dir(o.Project), "x")+`": "TRUST_PARENT"}`)
	if got := problems(t, o, nil); got != "" {
		t.Errorf("trusted by the parent's rule: %s", got)
	}
	// A deeper rule wins.
	writeFile(t, trust, `{"`+filepath.Dir(o.Project)+`": "TRUST_FOLDER", "`+o.Project+`": "DO_NOT_TRUST"}`)
	wantProblem(t, problems(t, o, nil), "is not a trusted folder")
	if got := problems(t, o, map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"}); got != "" {
		t.Errorf("GEMINI_CLI_TRUST_WORKSPACE=true: %s", got)
	}

	writeFile(t, trust, `{"`+o.Project+`": "TRUST_FOLDER"}`)
	user := filepath.Join(o.Home, ".gemini", "settings.json")
	writeFile(t, user, `{"hooksConfig": {"enabled": false, "disabled": ["agent-hub"]}}`)
	wantProblem(t, problems(t, o, nil),
		user+" sets hooksConfig.enabled to false", `fix: remove "enabled": false from "hooksConfig" in `+user,
		user+" lists agent-hub in hooksConfig.disabled")
}

func TestCheckCodex(t *testing.T) {
	o := checkRig(t, "codex")
	f := Check(o, func(string) string { return "" })
	if len(f) != 1 || f[0].Problem != "" || !strings.Contains(f[0].Detail, "6 hub hooks, all run") {
		t.Fatalf("fresh setup: %+v", f)
	}
	config := filepath.Join(o.Home, ".codex", "config.toml")
	trusted := string(mustRead(t, config))

	// Set up by hand (or by an older hub setup): nothing trusted.
	writeFile(t, config, "model = \"o3\"\n")
	wantProblem(t, problems(t, o, nil), "Codex skips the hub's SessionStart, UserPromptSubmit, PostToolUse, Stop, PermissionRequest, SessionEnd hooks: not trusted in "+config,
		"fix: run hub setup codex --project "+o.Project+" (it trusts the hooks it writes)")

	// Trusted, then changed (another approval wait, by hand).
	writeFile(t, config, trusted)
	hooks := filepath.Join(o.Project, ".codex", "hooks.json")
	writeFile(t, hooks, strings.Replace(string(mustRead(t, hooks)), "--approval-wait 0s", "--approval-wait 2m0s", 1))
	wantProblem(t, problems(t, o, nil), "the hub's PermissionRequest hooks: changed since they were trusted")

	// Disabled, the state written inline in [hooks.state].
	key := filepath.Join(o.Project, ".codex", "hooks.json") + ":stop:0:0"
	hash := codexHookHash("Stop", o.hookCommand("Stop"), 5)
	table := "[hooks.state.\"" + key + "\"]\ntrusted_hash = \"" + hash + "\"\n"
	if !strings.Contains(trusted, table) {
		t.Fatalf("config.toml lacks %q:\n%s", table, trusted)
	}
	inline := "[hooks.state]\n\"" + key + "\" = { trusted_hash = \"" + hash + "\", enabled = false }\n"
	writeFile(t, config, strings.Replace(trusted, table, "", 1)+"\n"+inline)
	writeFile(t, hooks, strings.Replace(string(mustRead(t, hooks)), "--approval-wait 2m0s", "--approval-wait 0s", 1))
	if got := problems(t, o, nil); !strings.Contains(got, "the hub's Stop hooks: disabled (enabled = false)") || strings.Contains(got, "PermissionRequest") {
		t.Errorf("problems:\n%s\nwant the Stop hook disabled, alone", got)
	}
}
