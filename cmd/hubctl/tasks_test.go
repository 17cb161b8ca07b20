package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTasksCommands(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	h.addAgent(t, "alice")
	dir := t.TempDir()
	md := filepath.Join(dir, "plan.md")
	if err := os.WriteFile(md, []byte(`# Parser

- [ ] ship the parser
  - [ ] write the lexer
  - [ ] write the grammar
    - [x] read the spec
- [ ] tell the team
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := h.hubctl(t, nil, "tasks", "import", md).must(t).stdout
	if !strings.Contains(out, "imported 4 tasks (3 ready); skipped 1 checked items") {
		t.Errorf("import output: %s", out)
	}
	list := h.hubctl(t, nil, "tasks", "list").must(t).stdout
	for _, want := range []string{"write the lexer", "ready", "ship the parser", "open"} {
		if !strings.Contains(list, want) {
			t.Errorf("tasks list lacks %q:\n%s", want, list)
		}
	}
	// The parent waits for both subtasks: IDs 1 (lexer), 2 (grammar), 3 (ship), 4 (tell).
	show := h.hubctl(t, nil, "tasks", "show", "3").must(t).stdout
	if !strings.Contains(show, "ship the parser") || !strings.Contains(show, "1, 2") {
		t.Errorf("tasks show 3 = %s, want the parser waiting for 1, 2", show)
	}
	out = h.hubctl(t, nil, "tasks", "claim", "1", "--agent", "alice").must(t).stdout
	if !strings.Contains(out, "task 1: claimed by alice") {
		t.Errorf("claim output: %s", out)
	}
	h.hubctl(t, nil, "tasks", "done", "1", "--note", "lexed").must(t)
	h.hubctl(t, nil, "tasks", "done", "2").must(t)
	ready := h.hubctl(t, nil, "tasks", "list", "--ready").must(t).stdout
	if !strings.Contains(ready, "ship the parser") || strings.Contains(ready, "write the lexer") {
		t.Errorf("ready after both subtasks are done:\n%s", ready)
	}
	h.hubctl(t, nil, "tasks", "cancel", "4", "--reason", "told in person").must(t)
	if r := h.hubctl(t, nil, "tasks", "done", "4"); r.code != 1 || !strings.Contains(r.stderr, "final") {
		t.Errorf("done after cancel: exit %d %q, want 1 saying cancelled is final", r.code, r.stderr)
	}

	js := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(js, []byte(`[{"key":"b","title":"second","after":["a"],"labels":["go"]},{"key":"a","title":"first","priority":"high"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := h.hubctl(t, nil, "tasks", "import", js).must(t).stdout; !strings.Contains(out, "imported 2 tasks (1 ready)") {
		t.Errorf("JSON import output: %s", out)
	}
	if err := os.WriteFile(js, []byte(`[{"key":"a","title":"x","after":["b"]},{"key":"b","title":"y","after":["a"]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := h.hubctl(t, nil, "tasks", "import", js); r.code == 0 || !strings.Contains(r.stderr, "cycle") {
		t.Errorf("importing a cycle: exit %d %q, want a refusal naming the cycle", r.code, r.stderr)
	}
	if r := h.hubctl(t, nil, "tasks", "add", "x", "--after", "999"); r.code != 1 || !strings.Contains(r.stderr, "999") {
		t.Errorf("add after a missing task: exit %d %q", r.code, r.stderr)
	}
	h.hubctl(t, nil, "tasks", "lease", "default", "45m").must(t)
}
