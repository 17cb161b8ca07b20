package setup

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agenthub/hub/internal/hooklocal"
)

// Finding is what Check found of the hub's hooks in one host's config:
// Problem is "" when the host runs them all, else what makes it skip them
// and Fix the command or edit that makes it run them.
type Finding struct {
	Host    string
	Detail  string
	Problem string
	Fix     string
	// Maybe: the problem depends on where the agent runs (a folder's
	// trust, judged for Project).
	Maybe bool
}

// hookFile is a settings file that holds hooks, as the host reads it.
type hookFile struct {
	path    string
	project bool
}

// Check reads o.Host's configuration as the host does (the user's files,
// under the host's own variable, and the project o.Project's) and reports
// the hub's hooks the host would skip: Claude Code with every hook
// disabled (disableAllHooks), Gemini CLI with hooks off (hooksConfig) or
// the hub's disabled by name, or o.Project an untrusted folder, Codex with
// a hook untrusted, modified since it was trusted, or disabled, and any
// hook whose binary is not there to run. None when the host has no hub
// hooks; getenv reads the environment (Gemini CLI's trust overrides).
func Check(o Options, getenv func(string) string) []Finding {
	files := o.hookFiles()
	var found []Finding
	var hubHooks []hubHook // every hub hook seen
	settings := map[string]*object{}
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			continue
		}
		root, err := parseObject(b)
		if err != nil {
			found = append(found, Finding{Host: o.Host, Problem: fmt.Sprintf("%s is not a JSON object (%v): the host cannot read it", f.path, err),
				Fix: "fix the JSON in " + f.path + " (or move it away and run hub setup " + o.Host + " again)"})
			continue
		}
		settings[f.path] = root
		name := f.path
		if o.Host == "codex" {
			name = o.codexHooksFileAt(f)
		}
		hubHooks = append(hubHooks, findHubHooks(root, name, func(cmd string) bool { return isHubHook(cmd, o.HubPath, o.HookPath) })...)
	}
	if len(hubHooks) == 0 {
		return found
	}
	fix := "hub setup " + o.Host
	if o.Project != "" && slices.ContainsFunc(files, func(f hookFile) bool { return f.project && settings[f.path] != nil }) {
		fix += " --project " + shellQuote(o.Project)
	}
	missing := map[string]bool{}
	for _, h := range hubHooks {
		bin := hookBinary(h.Command)
		if missing[bin] {
			continue
		}
		if !filepath.IsAbs(bin) {
			if p, err := exec.LookPath(bin); err == nil {
				bin = p
			}
		}
		if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing[bin] = true
			found = append(found, Finding{Host: o.Host, Problem: fmt.Sprintf("the hub's hooks run %s, which is not an executable file here: the host's hooks fail", bin),
				Fix: "run " + fix + " with the hub binary you use now (it writes its own path)"})
		} else if filepath.Base(bin) == "hub-hook" {
			if _, err := hooklocal.Sibling(bin, "hub"); err != nil {
				missing[bin] = true
				found = append(found, Finding{Host: o.Host, Problem: fmt.Sprintf("the hub's hooks run %s, with no hub binary beside it (%v): every hook that needs the hub fails", bin, err),
					Fix: "install hub and hub-hook in one directory, then run " + fix + " with that hub"})
			}
		}
	}
	switch o.Host {
	case "claude":
		for _, f := range files {
			if root := settings[f.path]; root != nil && root.get("disableAllHooks") == true {
				found = append(found, Finding{Host: o.Host, Problem: f.path + " sets disableAllHooks: Claude Code runs no hook, the hub's neither",
					Fix: `remove "disableAllHooks": true from ` + f.path})
			}
		}
	case "gemini":
		found = append(found, o.checkGemini(files, settings, getenv)...)
	case "codex":
		found = append(found, o.checkCodexTrust(hubHooks, fix)...)
	}
	if len(found) == 0 {
		found = append(found, Finding{Host: o.Host, Detail: fmt.Sprintf("%d hub hooks, all run by the host", len(hubHooks))})
	}
	return found
}

// hookFiles are the files o.Host reads hooks from: the user's, then the
// project's when o.Project is set.
func (o Options) hookFiles() []hookFile {
	var out []hookFile
	add := func(project bool, path ...string) {
		out = append(out, hookFile{path: filepath.Join(path...), project: project})
	}
	switch o.Host {
	case "claude":
		if o.ConfigDir != "" {
			add(false, o.ConfigDir, "settings.json")
		} else {
			add(false, o.Home, ".claude", "settings.json")
		}
		if o.Project != "" {
			add(true, o.Project, ".claude", "settings.json")
			add(true, o.Project, ".claude", "settings.local.json")
		}
	case "gemini":
		home := o.Home
		if o.ConfigDir != "" {
			home = o.ConfigDir
		}
		add(false, home, ".gemini", "settings.json")
		if o.Project != "" {
			add(true, o.Project, ".gemini", "settings.json")
		}
	case "codex":
		add(false, o.codexUserDir(), "hooks.json")
		if o.Project != "" {
			add(true, o.Project, ".codex", "hooks.json")
		}
	}
	return out
}

// codexUserDir is where Codex keeps the user's config: CODEX_HOME, else
// ~/.codex.
func (o Options) codexUserDir() string {
	if o.ConfigDir != "" {
		return o.ConfigDir
	}
	return filepath.Join(o.Home, ".codex")
}

// codexHooksFileAt is the name Codex gives the hooks.json f in its keys.
func (o Options) codexHooksFileAt(f hookFile) string {
	p := o
	if !f.project {
		p.Project = ""
	}
	return p.codexHooksFile()
}

// hookBinary is the program a hook command runs (its first word, unquoted).
func hookBinary(cmd string) string {
	m := hubHookRE().FindStringSubmatch(cmd)
	if m == nil {
		return ""
	}
	return strings.Trim(m[1], `'"`)
}

// checkGemini: Gemini CLI runs no hook with hooksConfig.enabled false
// (any settings file), none named in hooksConfig.disabled (the hub's are
// named agent-hub), and no settings hook at all in an untrusted folder
// (folder trust on, the default; ~/.gemini/trustedFolders.json).
func (o Options) checkGemini(files []hookFile, settings map[string]*object, getenv func(string) string) []Finding {
	var found []Finding
	folderTrust := true
	for _, f := range files {
		root := settings[f.path]
		if root == nil {
			continue
		}
		if hc, _ := root.get("hooksConfig").(*object); hc != nil {
			if hc.get("enabled") == false {
				found = append(found, Finding{Host: o.Host, Problem: f.path + " sets hooksConfig.enabled to false: Gemini CLI runs no hook",
					Fix: `remove "enabled": false from "hooksConfig" in ` + f.path})
			}
			if list, _ := hc.get("disabled").([]any); slices.Contains(list, any("agent-hub")) {
				found = append(found, Finding{Host: o.Host, Problem: f.path + " lists agent-hub in hooksConfig.disabled: Gemini CLI skips the hub's hooks",
					Fix: `remove "agent-hub" from "hooksConfig"."disabled" in ` + f.path})
			}
		}
		if sec, _ := root.get("security").(*object); sec != nil {
			if ft, _ := sec.get("folderTrust").(*object); ft != nil && ft.get("enabled") == false {
				folderTrust = false
			}
		}
	}
	if o.Project == "" || !folderTrust || getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		return found
	}
	home := o.Home
	if o.ConfigDir != "" {
		home = o.ConfigDir
	}
	trustFile := filepath.Join(home, ".gemini", "trustedFolders.json")
	if getenv("GEMINI_RESTRICTED_MODE") != "true" && getenv("GEMINI_CLI_TRUST_WORKSPACE") != "false" && geminiTrusts(trustFile, o.Project) {
		return found
	}
	return append(found, Finding{Host: o.Host, Maybe: true, Problem: o.Project + " is not a trusted folder: Gemini CLI skips every settings hook there, the hub's too",
		Fix: "start gemini in " + o.Project + " and trust the folder, or add " + tomlString(o.Project) + `: "TRUST_FOLDER" to ` + trustFile})
}

// geminiTrusts reports whether Gemini CLI's trust file trusts dir: the
// rule of the longest path that is dir or holds it (TRUST_PARENT: the
// rule path's parent) says TRUST_FOLDER or TRUST_PARENT.
func geminiTrusts(trustFile, dir string) bool {
	b, err := os.ReadFile(trustFile)
	if err != nil {
		return false
	}
	var rules map[string]string
	if json.Unmarshal(b, &rules) != nil {
		return false
	}
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	dir = real(dir)
	best, trust := -1, ""
	for path, level := range rules {
		eff := path
		if level == "TRUST_PARENT" {
			eff = filepath.Dir(path)
		}
		if rel, err := filepath.Rel(real(eff), dir); err == nil && inside(rel) && len(path) > best {
			best, trust = len(path), level
		}
	}
	return trust == "TRUST_FOLDER" || trust == "TRUST_PARENT"
}

// checkCodexTrust compares the trust in the user's config.toml with the
// hashes Codex computes for the hub's hooks now.
func (o Options) checkCodexTrust(hooks []hubHook, fix string) []Finding {
	path := filepath.Join(o.codexUserDir(), "config.toml")
	b, _ := os.ReadFile(path)
	states := codexHookStates(string(b))
	var untrusted, modified, disabled []string
	for _, h := range hooks {
		st, ok := states[h.Key]
		switch {
		case ok && st.disabled:
			disabled = append(disabled, h.Event)
		case !ok || st.hash == "":
			untrusted = append(untrusted, h.Event)
		case st.hash != h.Hash:
			modified = append(modified, h.Event)
		}
	}
	var found []Finding
	if len(untrusted) > 0 {
		found = append(found, Finding{Host: o.Host, Problem: "Codex skips the hub's " + strings.Join(untrusted, ", ") + " hooks: not trusted in " + path,
			Fix: "run " + fix + " (it trusts the hooks it writes), or review them with /hooks in codex"})
	}
	if len(modified) > 0 {
		found = append(found, Finding{Host: o.Host, Problem: "Codex skips the hub's " + strings.Join(modified, ", ") + " hooks: changed since they were trusted in " + path,
			Fix: "run " + fix + " (it trusts the hooks it writes), or review them with /hooks in codex"})
	}
	if len(disabled) > 0 {
		found = append(found, Finding{Host: o.Host, Problem: "Codex skips the hub's " + strings.Join(disabled, ", ") + " hooks: disabled (enabled = false) in " + path,
			Fix: "enable them with /hooks in codex, or remove their enabled = false from " + path})
	}
	return found
}

// codexHookState is what Codex's config says of one hook.
type codexHookState struct {
	hash     string
	disabled bool
}

// codexHookStates reads the [hooks.state] of a Codex config.toml: tables
// [hooks.state."KEY"] with trusted_hash and enabled (as Codex and hub
// setup write them), and "KEY" = { … } lines in [hooks.state].
func codexHookStates(text string) map[string]codexHookState {
	out := map[string]codexHookState{}
	key := ""
	field := func(line string) {
		st := out[key]
		if m := tomlFieldRE().FindAllStringSubmatch(line, -1); m != nil {
			for _, f := range m {
				switch f[1] {
				case "trusted_hash":
					st.hash = tomlUnquote(f[2])
				case "enabled":
					st.disabled = f[2] == "false"
				}
			}
		}
		out[key] = st
	}
	for _, line := range lines(text) {
		if m := tomlHeaderRE().FindStringSubmatch(line); m != nil {
			key = ""
			if k, ok := strings.CutPrefix(m[1], "hooks.state."); ok {
				key = tomlUnquote(strings.TrimSpace(k))
			} else if strings.TrimSpace(m[1]) == "hooks.state" {
				key = "\x00" // inline entries follow
			}
			continue
		}
		switch {
		case key == "\x00":
			if m := tomlKeyRE().FindStringSubmatch(line); m != nil {
				key = m[1]
				field(line)
				key = "\x00"
			}
		case key != "":
			field(line)
		}
	}
	delete(out, "\x00")
	return out
}

// tomlFieldRE matches `trusted_hash = "…"` and `enabled = true|false`;
// compiled at first use.
var tomlFieldRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(trusted_hash|enabled)\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*'|true|false)`)
})

// tomlUnquote is the value of a TOML string (basic or literal).
func tomlUnquote(s string) string {
	if strings.HasPrefix(s, "'") {
		return strings.Trim(s, "'")
	}
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, `"`)
}
