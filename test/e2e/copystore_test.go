package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// TestCopyStoreToPostgres moves a SQLite hub to PostgreSQL with the real
// binaries: agents made and a message posted on SQLite, the hub stopped,
// `hub copy-store`, and a hub on the copy where the old token still works
// and the next post gets a higher ID.
func TestCopyStoreToPostgres(t *testing.T) {
	dbURL := pgtest.Database(t)
	bin := buildBinaries(t)
	ctx := context.Background()

	old := startHub(t, bin)
	token := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		r := old.hubctl(t, nil, "agent", "add", name, "-o", "json").must(t)
		var resp struct{ Token string }
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || resp.Token == "" {
			t.Fatalf("agent add %s: %v\n%s", name, err, r.stdout)
		}
		token[name] = resp.Token
	}
	code, posted := old.call(t, ctx, "POST", "/v1/messages", token["alice"], map[string]any{"to": []string{"bob"}, "body": "before the move"})
	if code != 200 {
		t.Fatalf("POST /v1/messages = %d %v", code, posted)
	}
	oldID, err := strconv.ParseInt(field(posted, "message", "id"), 10, 64)
	if err != nil {
		t.Fatalf("message id %q: %v", field(posted, "message", "id"), err)
	}
	copyStore := func() (string, error) {
		cmd := exec.Command(bin.hub, "copy-store", "--from", old.dataDir, "--to", dbURL)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// While the hub runs, its data dir is refused.
	want := fmt.Sprintf("in use by another hub (pid %d", old.cmd.Process.Pid)
	if out, err := copyStore(); err == nil || !strings.Contains(out, want) {
		t.Errorf("copy-store of a running hub's data dir: %v\n%s\nwant a refusal containing %q", err, out, want)
	}
	if err := old.sigterm(t, 20*time.Second); err != nil {
		t.Fatalf("the SQLite hub's exit: %v", err)
	}

	out, err := copyStore()
	if err != nil {
		t.Fatalf("hub copy-store: %v\n%s", err, out)
	}
	for _, want := range []string{"agents", "messages", "done"} {
		if !strings.Contains(out, want) {
			t.Errorf("copy-store's progress lacks %q:\n%s", want, out)
		}
	}
	if out, err := copyStore(); err == nil || !strings.Contains(out, "not empty") {
		t.Errorf("a second copy-store into the same database: %v\n%s\nwant a refusal naming the non-empty target", err, out)
	}

	// The replica keeps the old data dir for the admin token.
	moved := startHub(t, bin, "--database-url", dbURL, "--data-dir", old.dataDir)
	code, inbox := moved.call(t, ctx, "GET", "/v1/messages", token["bob"], nil)
	if code != 200 || !strings.Contains(field(inbox, "messages"), "before the move") {
		t.Errorf("bob's inbox on the copy = %d %v, want the message posted before the move", code, inbox)
	}
	code, posted = moved.call(t, ctx, "POST", "/v1/messages", token["alice"], map[string]any{"to": []string{"bob"}, "body": "after the move"})
	if code != 200 {
		t.Fatalf("alice's post on the copy = %d %v", code, posted)
	}
	if id, _ := strconv.ParseInt(field(posted, "message", "id"), 10, 64); id <= oldID {
		t.Errorf("the first post on the copy got ID %d, want above %d", id, oldID)
	}
}
