package setup

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// codexServer is the [mcp_servers.hub] table of Codex's config.toml. Its
// tools are approved ("approve"): they act only as the agent, and Codex
// would otherwise ask a person before every call of a tool not marked
// read-only (a post, a mark-read), even under approval policy "never".
func (o Options) codexServer() string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a TOML basic string
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = %s\nargs = [%s, %s, %s]\nenv = { HUB_ADDR = %s }\ndefault_tools_approval_mode = \"approve\"\n",
		ServerName, q(o.HubPath), q("mcp"), q("--token-file"), q(o.TokenFile), q(o.Addr))
}

// tomlHeaderRE matches a TOML table header line and captures its name.
var tomlHeaderRE = regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$`)

// editTOML replaces the hub's table (and its subtables) in the TOML file at
// path with table, appended at the end; every other line, comments
// included, is kept as it is.
func editTOML(path, project, table string) (Change, error) {
	c, err := read(path, project, 0o644)
	if err != nil {
		return c, err
	}
	ours := func(name string) bool {
		name = strings.ReplaceAll(strings.ReplaceAll(name, `"`, ""), " ", "")
		return name == "mcp_servers."+ServerName || strings.HasPrefix(name, "mcp_servers."+ServerName+".")
	}
	var kept []string
	skipping := false
	for _, line := range lines(string(c.Old)) {
		if m := tomlHeaderRE.FindStringSubmatch(line); m != nil {
			skipping = ours(m[1])
		}
		if !skipping {
			kept = append(kept, line)
		}
	}
	for len(kept) > 0 && strings.TrimSpace(kept[len(kept)-1]) == "" {
		kept = kept[:len(kept)-1]
	}
	text := strings.Join(kept, "\n")
	if text != "" {
		text += "\n\n"
	}
	c.New = []byte(text + table)
	return c, nil
}
