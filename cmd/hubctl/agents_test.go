package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// addAgent runs `agent add NAME -o json` and returns the token.
func (h *testHub) addAgent(tb testing.TB, name string, flags ...string) string {
	tb.Helper()
	r := h.hubctl(tb, nil, append([]string{"agent", "add", name, "-o", "json"}, flags...)...).must(tb)
	var resp struct {
		Agent struct {
			Name string `json:"name"`
			Role string `json:"role"`
		} `json:"agent"`
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
		tb.Fatalf("agent add -o json: %v\n%s", err, r.stdout)
	}
	if resp.Agent.Name != name || resp.Token == "" {
		tb.Fatalf("agent add -o json = %s: want the agent and a token", r.stdout)
	}
	return resp.Token
}

func TestAgentAddPrintsSetupLines(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	r := h.hubctl(t, nil, "agent", "add", "alice", "--role", "coder").must(t)
	out := r.stdout
	i := strings.Index(out, "export HUB_TOKEN=")
	if i < 0 {
		t.Fatalf("no export line:\n%s", out)
	}
	token := strings.Fields(out[i+len("export HUB_TOKEN="):])[0]
	for _, want := range []string{
		"Created agent alice (role coder).",
		"claude mcp add hub --env HUB_TOKEN=" + token + " --env HUB_ADDR=" + h.addr + " -- hub mcp",
		"export HUB_ADDR=" + h.addr,
		`"env": {"HUB_TOKEN": "` + token + `", "HUB_ADDR": "` + h.addr + `"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The printed token works.
	st := h.hubctl(t, map[string]string{"HUB_TOKEN": token}, "status", "-o", "json").must(t)
	if !strings.Contains(st.stdout, `"agent": "alice"`) {
		t.Errorf("status with the new token: %s", st.stdout)
	}
	// A second add of the same name is refused with the server's message.
	dup := h.hubctl(t, nil, "agent", "add", "alice")
	if dup.code != 1 || !strings.Contains(dup.stderr, "alice") {
		t.Errorf("duplicate add: exit %d, stderr %q", dup.code, dup.stderr)
	}
	bad := h.hubctl(t, nil, "agent", "add", "Bad Name")
	if bad.code != 1 || bad.stderr == "" {
		t.Errorf("bad name: exit %d, stderr %q", bad.code, bad.stderr)
	}
}

func TestAgentLifecycle(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	tok := h.addAgent(t, "bob", "--role", "reviewer", "--display-name", "Bob", "--locale", "ja")
	h.addAgent(t, "carol")

	list := h.hubctl(t, nil, "agent", "list").must(t)
	lines := strings.Split(strings.TrimSpace(list.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(list.stdout, "reviewer") {
		t.Fatalf("agent list:\n%s", list.stdout)
	}
	for _, h := range agentHeaders {
		if !strings.Contains(lines[0], h) {
			t.Errorf("header lacks %s: %q", h, lines[0])
		}
	}

	show := h.hubctl(t, nil, "agent", "show", "bob").must(t)
	for _, want := range []string{"name:", "bob", "display name:", "Bob", "locale:", "ja"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("agent show lacks %q:\n%s", want, show.stdout)
		}
	}
	showJSON := h.hubctl(t, nil, "agent", "show", "bob", "-o", "json").must(t)
	var sj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(showJSON.stdout), &sj); err != nil || sj["agent"] == nil {
		t.Errorf("agent show -o json = %s (%v)", showJSON.stdout, err)
	}

	h.hubctl(t, nil, "agent", "update", "bob", "--role", "lead").must(t)
	if s := h.hubctl(t, nil, "agent", "show", "bob").must(t).stdout; !strings.Contains(s, "lead") {
		t.Errorf("after update:\n%s", s)
	}

	h.hubctl(t, nil, "agent", "disable", "bob").must(t)
	if r := h.hubctl(t, map[string]string{"HUB_TOKEN": tok}, "status"); r.code != 1 || !strings.Contains(r.stderr, "disabled") {
		t.Errorf("disabled agent's status: exit %d, stderr %q", r.code, r.stderr)
	}
	if s := h.hubctl(t, nil, "agent", "list", "--enabled").must(t).stdout; strings.Contains(s, "bob") {
		t.Errorf("list --enabled shows the disabled agent:\n%s", s)
	}
	h.hubctl(t, nil, "agent", "enable", "bob").must(t)
	h.hubctl(t, map[string]string{"HUB_TOKEN": tok}, "status").must(t)

	rot := h.hubctl(t, nil, "agent", "token", "rotate", "bob", "-o", "json").must(t)
	var rj struct{ Token string }
	if err := json.Unmarshal([]byte(rot.stdout), &rj); err != nil || rj.Token == "" || rj.Token == tok {
		t.Fatalf("rotate -o json = %s (%v)", rot.stdout, err)
	}
	if r := h.hubctl(t, map[string]string{"HUB_TOKEN": tok}, "status"); r.code != 1 {
		t.Errorf("old token still works after rotate")
	}
	h.hubctl(t, map[string]string{"HUB_TOKEN": rj.Token}, "status").must(t)
	h.hubctl(t, nil, "agent", "token", "revoke", "bob").must(t)
	if r := h.hubctl(t, map[string]string{"HUB_TOKEN": rj.Token}, "status"); r.code != 1 {
		t.Errorf("revoked token still works")
	}

	nf := h.hubctl(t, nil, "agent", "show", "nobody")
	if nf.code != 1 || !strings.Contains(nf.stderr, "nobody") {
		t.Errorf("show unknown agent: exit %d, stderr %q", nf.code, nf.stderr)
	}
}

func TestStatusAndWatch(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	tok := h.addAgent(t, "dave")
	st := h.hubctl(t, nil, "status", "--token", tok).must(t)
	for _, want := range []string{"agent:", "dave", "unread:", "heartbeat id:"} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, st.stdout)
		}
	}
	w := h.hubctl(t, nil, "watch", "--once").must(t)
	if !strings.Contains(w.stdout, "dave") || !strings.Contains(w.stdout, "Newest events:") {
		t.Errorf("watch --once:\n%s", w.stdout)
	}
	wj := h.hubctl(t, nil, "watch", "--once", "-o", "json").must(t)
	var frame map[string]json.RawMessage
	if err := json.Unmarshal([]byte(wj.stdout), &frame); err != nil || frame["agents"] == nil || frame["info"] == nil {
		t.Errorf("watch --once -o json = %s (%v)", wj.stdout, err)
	}
}
