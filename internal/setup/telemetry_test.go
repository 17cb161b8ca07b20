package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each host's telemetry export is pointed at the hub with the agent's
// header from `hub otel-headers`, never the token itself; a second run
// changes nothing.
func TestSetupTelemetry(t *testing.T) {
	const otlp = "http://127.0.0.1:7701/otlp"
	helper := "/opt/hub/bin/hub otel-headers --token-file /t/dev.token"
	base := Options{HubPath: "/opt/hub/bin/hub", Addr: "127.0.0.1:7700", TokenFile: "/t/dev.token", OTLP: otlp}

	t.Run("claude", func(t *testing.T) {
		o := base
		o.Host, o.Home = "claude", t.TempDir()
		apply(t, o)
		s := readJSON(t, filepath.Join(o.Home, ".claude", "settings.json"))
		env, _ := s["env"].(map[string]any)
		for k, v := range map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_LOGS_EXPORTER": "otlp",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": otlp} {
			if env[k] != v {
				t.Errorf("env.%s = %v, want %q", k, env[k], v)
			}
		}
		if s["otelHeadersHelper"] != helper {
			t.Errorf("otelHeadersHelper = %v, want %q", s["otelHeadersHelper"], helper)
		}
		checkIdempotent(t, o)

		// A project's settings do not carry Claude Code's telemetry: none
		// written, and the user is told.
		p := o
		p.Project = t.TempDir()
		apply(t, p)
		ps := readJSON(t, filepath.Join(p.Project, ".claude", "settings.json"))
		if _, ok := ps["env"]; ok || ps["otelHeadersHelper"] != nil {
			t.Errorf("project settings carry telemetry: %v", ps)
		}
		if steps := Steps(p); len(steps) != 1 || !strings.Contains(steps[0], "without --project") {
			t.Errorf("steps = %q, want one saying telemetry needs the user's settings", steps)
		}
	})

	t.Run("codex", func(t *testing.T) {
		o := base
		o.Host, o.Home = "codex", t.TempDir()
		dir := filepath.Join(o.Home, ".codex")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		// The user's own exporter is replaced (Codex has one); the rest kept.
		mine := "model = \"gpt-5\"\n\n[otel]\nexporter = \"none\"\nlog_user_prompt = true\n\n[analytics]\nenabled = false\n"
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(mine), 0o644); err != nil {
			t.Fatal(err)
		}
		apply(t, o)
		toml := string(mustRead(t, filepath.Join(dir, "config.toml")))
		want := "[otel]\n" +
			"exporter = { otlp-http = { endpoint = \"" + otlp + "/v1/logs\", protocol = \"binary\" } }\n" +
			"metrics_exporter = { otlp-http = { endpoint = \"" + otlp + "/v1/metrics\", protocol = \"binary\" } }\n" +
			"headers_helper = \"" + helper + "\"\n" +
			"headers_helper_refresh_interval_ms = 600000\n"
		if !strings.HasSuffix(toml, want) || strings.Count(toml, "[otel]") != 1 || strings.Contains(toml, "log_user_prompt") ||
			!strings.Contains(toml, "[analytics]\nenabled = false") || !strings.Contains(toml, "[mcp_servers.hub]") {
			t.Errorf("config.toml =\n%s\nwant the user's tables but [otel], and it to end with\n%s", toml, want)
		}
		checkIdempotent(t, o)
	})

	t.Run("gemini", func(t *testing.T) {
		o := base
		o.Host, o.Home = "gemini", t.TempDir()
		apply(t, o)
		s := readJSON(t, filepath.Join(o.Home, ".gemini", "settings.json"))
		tel, _ := s["telemetry"].(map[string]any)
		for k, v := range map[string]any{"enabled": true, "target": "local", "otlpEndpoint": otlp, "otlpProtocol": "http", "logPrompts": false} {
			if tel[k] != v {
				t.Errorf("telemetry.%s = %v, want %v", k, tel[k], v)
			}
		}
		steps := Steps(o)
		if len(steps) != 2 || !strings.Contains(steps[1], `OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer $(cat /t/dev.token)" gemini`) {
			t.Errorf("steps = %q, want how to give Gemini CLI the token", steps)
		}
		checkIdempotent(t, o)
	})

	t.Run("off", func(t *testing.T) {
		for _, host := range Hosts {
			o := base
			o.Host, o.Home, o.OTLP = host, t.TempDir(), ""
			changes, err := Plan(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				if s := string(c.New); strings.Contains(s, "otel") || strings.Contains(s, "OTEL") || strings.Contains(s, "telemetry") {
					t.Errorf("%s without telemetry writes it into %s:\n%s", host, c.Path, s)
				}
			}
		}
	})
}
