package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	_ "github.com/mattn/go-sqlite3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// TestBackupAndRestore: `hubctl backup FILE` (a relative FILE, made
// absolute against hubctl's directory) while agents keep posting; then a
// new hub started on a data dir holding the backup as hub.db has every
// agent and every message acknowledged before the backup began, and goes
// on numbering messages above them. This is the restore procedure of
// RELIABILITY.md.
func TestBackupAndRestore(t *testing.T) {
	h := startHubWith(t, func(m *app.Main) { m.RateLimit.PerSecond = 0 }) // alice posts as fast as she can
	aliceTok := doctorAgent(t, h, "alice")
	doctorAgent(t, h, "bob")
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	agent := hubv1.NewAgentServiceClient(conn)
	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+aliceTok)

	var before []string // acknowledged before the backup started
	for i := range 200 {
		r, err := agent.PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: fmt.Sprintf("before %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, r.GetMessage().GetId())
	}

	// Writers go on during the backup.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var during atomic.Int64
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := agent.PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: fmt.Sprintf("during %d %d", w, i)}); err != nil {
					t.Error(err)
					return
				}
				during.Add(1)
			}
		}()
	}
	dir := t.TempDir()
	t.Chdir(dir)
	r := h.hubctl(t, nil, "backup", "hub-backup.db")
	close(stop)
	wg.Wait()
	if r.code != 0 {
		t.Fatalf("hubctl backup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	abs := filepath.Join(dir, "hub-backup.db")
	if !strings.Contains(r.stdout, "backup written to "+abs) || !strings.Contains(r.stdout, "to restore") {
		t.Errorf("hubctl backup output:\n%s", r.stdout)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("the backup is not where asked: %v", err)
	}
	// A second backup to the same file is refused and leaves it alone.
	if r := h.hubctl(t, nil, "backup", "hub-backup.db"); r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("backup onto an existing file: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := h.hubctl(t, nil, "backup"); r.code != 2 {
		t.Errorf("backup without FILE: exit %d, want 2", r.code)
	}
	t.Logf("%d posts acknowledged while the backup ran", during.Load())

	// Restore: a new data dir whose hub.db is the backup.
	db, err := sql.Open("sqlite3", "file:"+abs+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var integrity string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check of the backup: %q %v", integrity, err)
	}
	db.Close()
	restoreDir := t.TempDir()
	b, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restoreDir, "hub.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	m := app.NewMain()
	m.DataDir = restoreDir
	m.GRPCAddr, m.HTTPAddr = "127.0.0.1:0", "off"
	m.NoOrchestrator = true
	m.Logger = slog.New(slog.DiscardHandler)
	if err := m.Start(context.Background()); err != nil {
		t.Fatalf("start a hub on the restored data dir: %v", err)
	}
	defer m.Close()
	restored := &testHub{m: m, addr: m.GRPCAddress(), dataDir: restoreDir}

	// The agents are there, with their tokens: alice's still works.
	r = restored.hubctl(t, nil, "-o", "json", "agent", "list").must(t)
	for _, name := range []string{"alice", "bob"} {
		if !strings.Contains(r.stdout, `"`+name+`"`) {
			t.Errorf("restored hub lacks agent %s:\n%s", name, r.stdout)
		}
	}
	adminTok, _ := m.AdminToken()
	admin := hubv1.NewAgentServiceClient(m.Conn())
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminTok)
	have := map[string]bool{}
	var maxID int64
	cursor := ""
	for {
		lr, err := admin.ListMessages(ctx, &hubv1.ListMessagesRequest{AfterId: cursor, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range lr.GetMessages() {
			have[msg.GetId()] = true
			id, _ := strconv.ParseInt(msg.GetId(), 10, 64)
			maxID = max(maxID, id)
		}
		if !lr.GetHasMore() {
			break
		}
		cursor = lr.GetCursor()
	}
	for _, id := range before {
		if !have[id] {
			t.Errorf("message %s, acknowledged before the backup, is not in the restored hub", id)
		}
	}
	rconn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer rconn.Close()
	pr, err := hubv1.NewAgentServiceClient(rconn).PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "after restore"})
	if err != nil {
		t.Fatalf("alice's token on the restored hub: %v", err)
	}
	if id, _ := strconv.ParseInt(pr.GetMessage().GetId(), 10, 64); id <= maxID {
		t.Errorf("new message ID %d after restore, not above the restored %d", id, maxID)
	}
}
