package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBeatJSON(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	h.addAgent(t, "alice")
	r := h.hubctl(t, nil, "beat", "-o", "json").must(t)
	// The REST body of GET /v1/admin/beat: proto field names, int64 as strings.
	var resp struct {
		Beat struct {
			Beat            *string `json:"beat"`
			IntervalSeconds *string `json:"interval_seconds"`
			Agents          []struct {
				Agent     string  `json:"agent"`
				SinceLast *string `json:"since_last"`
				Reading   string  `json:"reading"`
			} `json:"agents"`
		} `json:"beat"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
		t.Fatalf("beat -o json is not the REST shape: %v\n%s", err, r.stdout)
	}
	b := resp.Beat
	if b.Beat == nil || b.IntervalSeconds == nil || len(b.Agents) != 1 || b.Agents[0].Agent != "alice" ||
		b.Agents[0].Reading != "active_flow" || b.Agents[0].SinceLast == nil {
		t.Errorf("beat -o json = %s", r.stdout)
	}
	text := h.hubctl(t, nil, "beat").must(t).stdout
	for _, want := range []string{"Beat:", "Started:", "Last beat:", "alice", "active_flow"} {
		if !strings.Contains(text, want) {
			t.Errorf("beat output lacks %q:\n%s", want, text)
		}
	}
}

func TestNudgeCommand(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	tok := h.addAgent(t, "alice")
	r := h.hubctl(t, nil, "nudge", "alice", "please", "report").must(t)
	if !strings.Contains(r.stdout, "@alice: please report") {
		t.Errorf("nudge output: %s", r.stdout)
	}
	msgs := h.hubctl(t, map[string]string{"HUB_TOKEN": tok}, "status", "-o", "json").must(t)
	if !strings.Contains(msgs.stdout, `"mention_count": "1"`) {
		t.Errorf("status after nudge: %s", msgs.stdout)
	}
	if r := h.hubctl(t, nil, "nudge", "nobody"); r.code != 1 || !strings.Contains(r.stderr, "nobody") {
		t.Errorf("nudge unknown: exit %d %q", r.code, r.stderr)
	}
	if r := h.hubctl(t, nil, "nudge"); r.code != 2 {
		t.Errorf("nudge without NAME: exit %d, want 2", r.code)
	}
}

func TestPulseCommands(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	h.addAgent(t, "alice")
	if r := h.hubctl(t, nil, "pulse", "set", "alice", "--hours", "25:00-06:00", "--instructions", "x"); r.code != 1 || !strings.Contains(r.stderr, "HH:MM-HH:MM") {
		t.Errorf("bad hours: exit %d %q", r.code, r.stderr)
	}
	h.hubctl(t, nil, "pulse", "set", "alice", "--interval", "1h", "--hours", "22:00-06:00", "--tz", "UTC").must(t)
	list := h.hubctl(t, nil, "pulses").must(t).stdout
	if !strings.Contains(list, "blocked: no instructions to send") || !strings.Contains(list, "22:00-06:00 UTC") {
		t.Errorf("pulses without instructions:\n%s", list)
	}
	if r := h.hubctl(t, nil, "pulse", "trigger", "alice"); r.code != 1 || !strings.Contains(r.stderr, "empty pulse instructions") {
		t.Errorf("trigger without instructions: exit %d %q", r.code, r.stderr)
	}
	// Flags not given keep their value.
	h.hubctl(t, nil, "pulse", "set", "alice", "--instructions", "Check reminders.").must(t)
	var ps struct {
		Pulses []struct {
			Config struct {
				IntervalSeconds string `json:"interval_seconds"`
				ActiveHours     string `json:"active_hours"`
				Instructions    string `json:"instructions"`
			} `json:"config"`
		} `json:"pulses"`
	}
	out := h.hubctl(t, nil, "pulses", "-o", "json").must(t).stdout
	if err := json.Unmarshal([]byte(out), &ps); err != nil || len(ps.Pulses) != 1 {
		t.Fatalf("pulses -o json: %v\n%s", err, out)
	}
	if c := ps.Pulses[0].Config; c.IntervalSeconds != "3600" || c.ActiveHours != "22:00-06:00" || c.Instructions != "Check reminders." {
		t.Errorf("merged config = %+v", c)
	}
	r := h.hubctl(t, nil, "pulse", "trigger", "alice").must(t)
	if !strings.Contains(r.stdout, "Pulse sent to alice: heartbeat ") {
		t.Errorf("trigger: %s", r.stdout)
	}
	if list := h.hubctl(t, nil, "pulses").must(t).stdout; !strings.Contains(list, "blocked:") || !strings.Contains(list, "yes") {
		t.Errorf("pulses after trigger:\n%s", list)
	}
}

func TestCronCommands(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	tok := h.addAgent(t, "alice")
	bad := h.hubctl(t, nil, "cron", "add", "bad", "--cron", "0 25 * * *", "--to", "alice", "--message", "m")
	if bad.code != 1 || !strings.Contains(bad.stderr, "above maximum") {
		t.Errorf("bad cron spec: exit %d %q", bad.code, bad.stderr)
	}
	for _, args := range [][]string{
		{"cron", "add", "x", "--to", "alice", "--message", "m"},
		{"cron", "add", "x", "--every", "1s", "--cron", "* * * * *", "--to", "alice", "--message", "m"},
		{"cron", "add", "x", "--every", "1500ms", "--to", "alice", "--message", "m"},
		{"cron", "add", "x", "--at", "tomorrow", "--to", "alice", "--message", "m"},
		{"cron", "add", "x", "--every", "1s", "--message", "m"},
	} {
		if r := h.hubctl(t, nil, args...); r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
	past := h.hubctl(t, nil, "cron", "add", "old", "--at", "2001-01-01T00:00:00Z", "--to", "alice", "--message", "m").must(t)
	if !strings.Contains(past.stdout, "Warning:") || !strings.Contains(past.stdout, "never run") {
		t.Errorf("at in the past: %s", past.stdout)
	}
	h.hubctl(t, nil, "cron", "add", "ping", "--every", "1s", "--to", "alice", "--message", "ping!").must(t)
	h.hubctl(t, nil, "cron", "add", "daily", "--cron", "0 9 * * 1-5", "--to", "#ops", "--message", "standup").must(t)
	list := h.hubctl(t, nil, "cron", "list").must(t).stdout
	for _, want := range []string{"ping", "every 1s", "daily", "cron 0 9 * * 1-5", "#ops", "never"} {
		if !strings.Contains(list, want) {
			t.Errorf("cron list lacks %q:\n%s", want, list)
		}
	}
	if r := h.hubctl(t, nil, "cron", "add", "ping", "--every", "1s", "--to", "alice", "--message", "again"); r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("duplicate: exit %d %q", r.code, r.stderr)
	}
	run := h.hubctl(t, nil, "cron", "run", "ping").must(t)
	if !strings.Contains(run.stdout, "ran: ok") {
		t.Errorf("cron run: %s", run.stdout)
	}
	if fail := h.hubctl(t, nil, "cron", "run", "daily").must(t); !strings.Contains(fail.stdout, "failed: channel #ops does not exist") {
		t.Errorf("cron run to a missing channel: %s", fail.stdout)
	}
	runs := h.hubctl(t, nil, "cron", "runs").must(t).stdout
	if !strings.Contains(runs, "ping") || !strings.Contains(runs, "error") {
		t.Errorf("cron runs:\n%s", runs)
	}
	st := h.hubctl(t, map[string]string{"HUB_TOKEN": tok}, "status", "-o", "json").must(t)
	if !strings.Contains(st.stdout, `"unread_count": "1"`) {
		t.Errorf("alice's status after a cron run: %s", st.stdout)
	}
	h.hubctl(t, nil, "cron", "disable", "ping").must(t)
	if list := h.hubctl(t, nil, "cron", "list", "-o", "json").must(t).stdout; !strings.Contains(list, `"enabled": false`) {
		t.Errorf("after disable: %s", list)
	}
	en := h.hubctl(t, nil, "cron", "enable", "ping").must(t)
	if !strings.Contains(en.stdout, "enabled; next run") {
		t.Errorf("enable: %s", en.stdout)
	}
	h.hubctl(t, nil, "cron", "rm", "ping").must(t)
	if r := h.hubctl(t, nil, "cron", "rm", "ping"); r.code != 1 || !strings.Contains(r.stderr, "no cron job named") {
		t.Errorf("rm twice: exit %d %q", r.code, r.stderr)
	}
	// The runs of a removed job are still listed by its name.
	if r := h.hubctl(t, nil, "cron", "runs", "ping").must(t).stdout; !strings.Contains(r, "ping") || !strings.Contains(r, "ok") {
		t.Errorf("cron runs of the removed job:\n%s", r)
	}
	if r := h.hubctl(t, nil, "cron", "runs", "never-was"); r.code != 1 || !strings.Contains(r.stderr, "no cron job named") {
		t.Errorf("cron runs of an unknown job: exit %d %q", r.code, r.stderr)
	}
}
