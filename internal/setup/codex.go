package setup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// Codex runs a hook from a user's or a project's hooks.json only once it
// is trusted: the user's config.toml holds, per hook,
//
//	[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// and a hook whose hash differs from the one Codex computes for it now
// (its command or time-out changed) is "modified", skipped like an
// untrusted one. Codex reads this state from the user's config only,
// never a project's. hub setup writes the trust of the hooks it writes,
// as the person who runs it asks for them; Codex 0.171's own
// computation (codex-rs hooks/src/engine/discovery.rs, command_hook_hash,
// and config's version_for_toml) is what codexHookHash reproduces.

// hubHook is one of the hub's hooks in a host's hooks file, with the key
// Codex keeps its state under and the hash Codex trusts it by.
type hubHook struct {
	Event, Command string
	Key, Hash      string
}

// codexHookKey is the key of a hook's state in Codex's config: the
// hooks.json path as Codex names it, the event in snake case, the
// group's index in the event's list and the hook's index in the group.
func codexHookKey(hooksFile, event string, group, handler int) string {
	return fmt.Sprintf("%s:%s:%d:%d", hooksFile, snakeCase(event), group, handler)
}

// codexHookHash is the hash by which Codex trusts a command hook without a
// matcher (the hub's): SHA-256 of the compact JSON, keys sorted, of
// {"event_name", "hooks": [{"type", "command", "timeout", "async"}]},
// with the time-out in seconds as Codex normalizes it (600 when unset,
// at least 1).
func codexHookHash(event, command string, timeout int64) string {
	var b strings.Builder
	b.WriteString(`{"event_name":`)
	writeSerdeString(&b, snakeCase(event))
	b.WriteString(`,"hooks":[{"async":false,"command":`)
	writeSerdeString(&b, command)
	b.WriteString(`,"timeout":` + strconv.FormatInt(timeout, 10) + `,"type":"command"}]}`)
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeSerdeString writes s as a JSON string the way Rust's serde_json
// does (the bytes Codex hashes): only '"', '\\' and control characters
// escaped, short forms where JSON has them, everything else as it is.
func writeSerdeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// snakeCase turns a hook event name into Codex's key label:
// PermissionRequest → permission_request.
func snakeCase(event string) string {
	var b strings.Builder
	for i, r := range event {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// findHubHooks lists the hooks of the hooks file root whose command is
// the hub's (ours), with their Codex keys under the name hooksFile and
// their hashes.
func findHubHooks(root *object, hooksFile string, ours func(cmd string) bool) []hubHook {
	hooks, _ := root.get("hooks").(*object)
	if hooks == nil {
		return nil
	}
	var out []hubHook
	for _, event := range hooks.keys {
		groups, _ := hooks.get(event).([]any)
		for gi, g := range groups {
			gobj, _ := g.(*object)
			if gobj == nil || gobj.get("matcher") != nil {
				continue
			}
			hs, _ := gobj.get("hooks").([]any)
			for hi, h := range hs {
				hobj, _ := h.(*object)
				if hobj == nil {
					continue
				}
				cmd, _ := hobj.get("command").(string)
				if hobj.get("type") != "command" || !ours(cmd) {
					continue
				}
				out = append(out, hubHook{
					Event: event, Command: cmd,
					Key:  codexHookKey(hooksFile, event, gi, hi),
					Hash: codexHookHash(event, cmd, codexTimeout(hobj.get("timeout"))),
				})
			}
		}
	}
	return out
}

// codexTimeout is a hook's time-out as Codex reads it: whole seconds,
// 600 when unset, at least 1.
func codexTimeout(v any) int64 {
	n, ok := v.(json.Number)
	if !ok {
		return 600
	}
	t, err := n.Int64()
	if err != nil {
		return 600
	}
	return max(t, 1)
}

// codexTrustTables are the [hooks.state."KEY"] tables that trust hooks.
func codexTrustTables(hooks []hubHook) string {
	var tables []string
	for _, h := range hooks {
		tables = append(tables, fmt.Sprintf("[hooks.state.%s]\ntrusted_hash = %s\n", tomlString(h.Key), tomlString(h.Hash)))
	}
	return strings.Join(tables, "\n")
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// codexHooksFile is the path of the hooks.json setup writes as Codex
// names it in its keys: under CODEX_HOME or the project with their
// symbolic links resolved (Codex canonicalizes both), ~/.codex as it is.
func (o Options) codexHooksFile() string {
	resolve := func(dir string) string {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return r
		}
		return dir
	}
	switch {
	case o.Project != "":
		return filepath.Join(resolve(o.Project), ".codex", "hooks.json")
	case o.ConfigDir != "":
		abs, _ := filepath.Abs(o.ConfigDir)
		return filepath.Join(resolve(abs), "hooks.json")
	}
	return filepath.Join(o.Home, ".codex", "hooks.json")
}
