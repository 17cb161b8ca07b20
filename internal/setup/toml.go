package setup

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
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

// tomlHeaderRE matches a TOML table header line and captures its name;
// compiled at its first use, not at the start of every hub command.
var tomlHeaderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$`) })

// codexTelemetry is the [otel] table of Codex's config.toml: its log
// events and metrics exported to the hub over OTLP/HTTP (protobuf), the
// agent's header from `hub otel-headers` (otel.headers_helper, run again
// every refresh interval, so a rotated token is picked up). Codex has one
// exporter: a table of the user's own is replaced. "" without telemetry.
func (o Options) codexTelemetry() string {
	if o.OTLP == "" {
		return ""
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	exporter := func(signal string) string {
		return fmt.Sprintf("{ otlp-http = { endpoint = %s, protocol = \"binary\" } }", q(strings.TrimSuffix(o.OTLP, "/")+"/v1/"+signal))
	}
	return fmt.Sprintf("[otel]\nexporter = %s\nmetrics_exporter = %s\nheaders_helper = %s\nheaders_helper_refresh_interval_ms = %d\n",
		exporter("logs"), exporter("metrics"), q(o.otelHeadersCommand()), codexHeadersRefresh.Milliseconds())
}

// codexHeadersRefresh is how often Codex runs the headers helper again.
const codexHeadersRefresh = 10 * time.Minute

// editTOML replaces the hub's tables (and their subtables) in the TOML file
// at path with tables, appended at the end; every other line, comments
// included, is kept as it is. The hub's tables are those tables name
// ([mcp_servers.hub], [otel] when given, [hooks.state."KEY"] of the hub's
// hooks) and those named in drop (the state of hooks an earlier setup
// wrote); a key of either written inside [hooks.state] itself goes too,
// so that no key is left defined twice.
func editTOML(path, project string, drop []string, tables ...string) (Change, error) {
	c, err := read(path, project, 0o644)
	if err != nil {
		return c, err
	}
	norm := func(name string) string { return strings.ReplaceAll(strings.ReplaceAll(name, `"`, ""), " ", "") }
	var names []string
	for _, n := range drop {
		names = append(names, norm(n))
	}
	for _, t := range tables {
		for _, line := range lines(t) {
			if m := tomlHeaderRE().FindStringSubmatch(line); m != nil {
				names = append(names, norm(m[1]))
			}
		}
	}
	ours := func(name string) bool {
		for _, n := range names {
			if name == n || strings.HasPrefix(name, n+".") {
				return true
			}
		}
		return false
	}
	var kept []string
	skipping, table := false, ""
	for _, line := range lines(string(c.Old)) {
		if m := tomlHeaderRE().FindStringSubmatch(line); m != nil {
			table = norm(m[1])
			skipping = ours(table)
		} else if table == "hooks.state" {
			if m := tomlKeyRE().FindStringSubmatch(line); m != nil && ours("hooks.state."+m[1]) {
				continue
			}
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
	var add []string
	for _, t := range tables {
		if t != "" {
			add = append(add, t)
		}
	}
	c.New = []byte(text + strings.Join(add, "\n"))
	return c, nil
}

// tomlKeyRE matches a line that starts with a quoted key (`"KEY" = …` or
// `"KEY".field = …`) and captures the key; compiled at first use.
var tomlKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*"([^"]*)"\s*[.=]`) })
