package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// parseTaskImport reads the tasks of `hubctl tasks import`: a JSON array
// (or {"tasks": [...]}) of importTask, or a Markdown checklist. It returns
// them in an order where every task comes after those it depends on, and
// how many checked items it skipped.
func parseTaskImport(data []byte) ([]*hubv1.ImportTask, int, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') {
		items, err := parseTaskJSON(trimmed)
		return items, 0, err
	}
	return parseChecklist(string(data))
}

// importTask is one task of a JSON import. after names the keys of other
// tasks of the same file that must be done first; depends_on, IDs of tasks
// already on the board.
type importTask struct {
	Key         string   `json:"key"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Priority    string   `json:"priority"`
	Labels      []string `json:"labels"`
	Role        string   `json:"role"`
	After       []string `json:"after"`
	DependsOn   []string `json:"depends_on"`
	Paths       []string `json:"paths"`
}

func parseTaskJSON(data []byte) ([]*hubv1.ImportTask, error) {
	var list []importTask
	if data[0] == '{' {
		var wrapped struct {
			Tasks []importTask `json:"tasks"`
		}
		if err := strictJSON(data, &wrapped); err != nil {
			return nil, err
		}
		list = wrapped.Tasks
	} else if err := strictJSON(data, &list); err != nil {
		return nil, err
	}
	byKey := map[string]int{}
	for i, t := range list {
		if t.Key != "" {
			if _, dup := byKey[t.Key]; dup {
				return nil, fmt.Errorf("task %d: key %q is used twice: keys name one task each", i+1, t.Key)
			}
			byKey[t.Key] = i
		}
	}
	// Emit each task after the tasks its after keys name (depth first),
	// refusing a cycle among them.
	out := make([]*hubv1.ImportTask, 0, len(list))
	state := make([]int, len(list)) // 0 new, 1 in progress, 2 emitted
	var emit func(i int, path []string) error
	emit = func(i int, path []string) error {
		switch state[i] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("the after keys close a cycle: %s → %s", strings.Join(path, " → "), list[i].Key)
		}
		state[i] = 1
		for _, k := range list[i].After {
			j, ok := byKey[k]
			if !ok {
				return fmt.Errorf("task %q comes after %q, which is no key of this file", list[i].Title, k)
			}
			if err := emit(j, append(path, list[i].Key)); err != nil {
				return err
			}
		}
		state[i] = 2
		p, err := parsePriority(list[i].Priority)
		if err != nil {
			return fmt.Errorf("task %q: %w", list[i].Title, err)
		}
		t := list[i]
		key := t.Key
		if key == "" {
			key = fmt.Sprintf("#%d", i+1) // no task of the file can name it
		}
		out = append(out, &hubv1.ImportTask{Key: key, After: t.After, Task: &hubv1.TaskSpec{Title: t.Title, Description: t.Description,
			Priority: p, Labels: t.Labels, Role: t.Role, DependsOn: t.DependsOn, Paths: t.Paths}})
		return nil
	}
	for i := range list {
		if err := emit(i, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// strictJSON decodes data into v, refusing fields v does not have.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not a task list: %w (expected [{\"key\": \"parser\", \"title\": \"…\", \"after\": [\"lexer\"]}, …])", err)
	}
	return nil
}

// checklistItem is one "- [ ] title" line of a Markdown checklist and the
// items indented under it.
type checklistItem struct {
	indent   int
	title    string
	done     bool
	line     int
	children []*checklistItem
}

// parseChecklist reads a Markdown checklist: every "- [ ] title" (or "*",
// "+") is a task; the items indented under one are its subtasks, which must
// be done before it. Checked items ("- [x]") are done already: they are
// skipped, and nothing waits for them. Other lines (headings, prose) are
// ignored.
func parseChecklist(text string) ([]*hubv1.ImportTask, int, error) {
	root := &checklistItem{indent: -1}
	stack := []*checklistItem{root}
	n := 0
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(strings.ReplaceAll(raw, "\t", "    "), " \r")
		body := strings.TrimLeft(line, " ")
		indent := len(line) - len(body)
		if len(body) < 6 || !strings.ContainsRune("-*+", rune(body[0])) || body[1] != ' ' || body[2] != '[' || body[4] != ']' {
			continue
		}
		mark := body[3]
		if mark != ' ' && mark != 'x' && mark != 'X' {
			continue
		}
		title := strings.TrimSpace(body[5:])
		if title == "" {
			return nil, 0, fmt.Errorf("line %d: a checklist item without a title", i+1)
		}
		for len(stack) > 1 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		it := &checklistItem{indent: indent, title: title, done: mark != ' ', line: i + 1}
		parent := stack[len(stack)-1]
		parent.children = append(parent.children, it)
		stack = append(stack, it)
		n++
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("no checklist items: expected lines such as \"- [ ] write the parser\", with subtasks indented under their task")
	}
	var out []*hubv1.ImportTask
	skipped := 0
	var walk func(it *checklistItem) (key string)
	walk = func(it *checklistItem) string {
		var after []string
		for _, c := range it.children {
			if k := walk(c); k != "" {
				after = append(after, k)
			}
		}
		if it == root {
			return ""
		}
		if it.done {
			skipped++
			return ""
		}
		key := fmt.Sprintf("line %d", it.line)
		out = append(out, &hubv1.ImportTask{Key: key, After: after, Task: &hubv1.TaskSpec{Title: it.title}})
		return key
	}
	walk(root)
	return out, skipped, nil
}
