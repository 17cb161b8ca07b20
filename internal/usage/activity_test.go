package usage

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
)

// The tools the real hosts ran are the agent's activity: named as the
// hosts name them, once a minute at most.
func TestToolActivity(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"claude": "tools run (host telemetry): Bash",
		"codex":  "tools run (host telemetry): exec_command",
		"gemini": "tools run (host telemetry): run_shell_command",
	} {
		m := NewMeter()
		rep := m.Logs(1, logsFixture(t, host+"_logs.json"))
		if rep.ToolActive.IsZero() || rep.Tools != want {
			t.Errorf("%s: tool activity at %v %q, want %q", host, rep.ToolActive, rep.Tools, want)
		}
		if again := m.Logs(1, logsFixture(t, host+"_logs.json")); !again.ToolActive.IsZero() {
			t.Errorf("%s: the same tools again within the minute reported again: %q", host, again.Tools)
		}
	}
}

// toolEvents is an export of Claude Code tool_result events at t, one
// per name.
func toolEvents(at time.Time, names ...string) string {
	var recs []string
	for _, n := range names {
		q, _ := json.Marshal(n)
		recs = append(recs, `{"timeUnixNano":"`+itoa(at.UnixNano())+`","body":{"stringValue":"claude_code.tool_result"},"attributes":[
		{"key":"event.name","value":{"stringValue":"tool_result"}},{"key":"session.id","value":{"stringValue":"s"}},
		{"key":"tool_name","value":{"stringValue":`+string(q)+`}},{"key":"success","value":{"stringValue":"true"}}]}`)
	}
	return `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"claude-code"}}]},
	"scopeLogs":[{"logRecords":[` + strings.Join(recs, ",") + `]}]}]}`
}

// What a host names its tools is shown bounded and only in the hub's own
// characters; a tool name is never a way into a person's terminal.
func TestToolActivityBoundedAndSanitized(t *testing.T) {
	t.Parallel()
	m := NewMeter()
	at := time.Unix(1796167000, 0)
	evil := "Bash\x1b]0;pwned\x07\n\u202eevil" + strings.Repeat("x", 200)
	rep := m.Logs(1, mustLogs(toolEvents(at, evil, "Read", "Read", "a", "b", "c", "d", "e", "f", "g", "h")))
	if strings.ContainsAny(rep.Tools, "\x1b\x07\n\u202e") || len(rep.Tools) > 1024 {
		t.Errorf("tools line %q: want no control or bidi characters, at most 1 KiB", rep.Tools)
	}
	wantStart := "tools run (host telemetry): Bash__0_pwned___evil"
	if !strings.HasPrefix(rep.Tools, wantStart) || !strings.Contains(rep.Tools, ", Read, a,") || !strings.HasSuffix(rep.Tools, ", …") {
		t.Errorf("tools line = %q, want it to start %q, name Read once and end with … past 8 tools", rep.Tools, wantStart)
	}
	if first, _, _ := strings.Cut(strings.TrimPrefix(rep.Tools, "tools run (host telemetry): "), ","); len(first) != maxToolName {
		t.Errorf("a long tool name is %d bytes, want it cut to %d", len(first), maxToolName)
	}
	// Within the minute: not again; a minute on: again.
	if r := m.Logs(1, mustLogs(toolEvents(at.Add(59*time.Second), "Edit"))); !r.ToolActive.IsZero() {
		t.Errorf("tools 59 s later reported: %q", r.Tools)
	}
	if r := m.Logs(1, mustLogs(toolEvents(at.Add(time.Minute), "Edit"))); r.Tools != "tools run (host telemetry): Edit" {
		t.Errorf("tools a minute later = %q, want Edit", r.Tools)
	}
}

func mustLogs(s string) *collogs.ExportLogsServiceRequest {
	req := &collogs.ExportLogsServiceRequest{}
	if err := decode([]byte(s), encJSON, nil, req); err != nil {
		panic(err)
	}
	return req
}
