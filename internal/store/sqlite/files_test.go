package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// outsideEnv names the database a process that the tests start opens with
// SQLite's default VFS, as a sqlite3 shell or a script would; outsideHoldEnv
// asks it to hold the file open (after one read) until its stdin closes.
const (
	outsideEnv     = "HUB_TEST_OUTSIDE_DB"
	outsideHoldEnv = "HUB_TEST_OUTSIDE_HOLD"
)

// TestMain runs the tests, or, in a process outside started, reads the
// database from outside.
func TestMain(m *testing.M) {
	if path := os.Getenv(outsideEnv); path != "" {
		if err := outsideRead(path, os.Getenv(outsideHoldEnv) != ""); err != nil {
			fmt.Println("error:", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// outsideRead counts the agents at path and prints the count; with hold,
// it then prints "ready" and keeps the connection open until stdin closes.
func outsideRead(path string, hold bool) error {
	db, err := sql.Open("sqlite3", "file:"+uriPath(path)+"?_busy_timeout=200")
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM agents`).Scan(&n); err != nil {
		return err
	}
	fmt.Println("agents:", n)
	if hold {
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
	}
	return nil
}

// outside starts a process reading path from outside; with hold it
// returns once the process holds the file open, and the process ends when
// release is called. It returns the process's first line.
func outside(t *testing.T, path string, hold bool) (line string, release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), outsideEnv+"="+path)
	if hold {
		cmd.Env = append(cmd.Env, outsideHoldEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	line, err = out.ReadString('\n')
	if err != nil {
		t.Fatalf("outside process: %q, %v", line, err)
	}
	if hold && strings.HasPrefix(line, "agents:") {
		if ready, err := out.ReadString('\n'); ready != "ready\n" {
			t.Fatalf("outside process: %q, %v", ready, err)
		}
	}
	release = sync.OnceFunc(func() {
		stdin.Close()
		io.Copy(io.Discard, out)
		if err := cmd.Wait(); err != nil {
			t.Errorf("outside process: %v", err)
		}
	})
	t.Cleanup(release)
	return strings.TrimSpace(line), release
}

// While the store is open no other process reads the file (its locks and
// its log's index are the hub process's own, files.go); once it is closed
// another process reads everything it committed.
func TestNoOtherProcessWhileOpen(t *testing.T) {
	path := tempPath(t)
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	createAgent(t, db, "ann")
	createAgent(t, db, "bob")
	if line, _ := outside(t, path, false); !strings.Contains(line, "database is locked") {
		t.Errorf("another process read the open store: %q, want database is locked", line)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if line, _ := outside(t, path, false); line != "agents: 2" {
		t.Errorf("another process after Close: %q, want agents: 2", line)
	}
}

// Open refuses a file that another process has open with SQLite's default
// VFS (after its busy timeout), naming the file and what to do, and opens
// it once that process has closed it.
func TestOpenRefusesAFileOpenElsewhere(t *testing.T) {
	path := tempPath(t)
	db := openDB(t, path)
	createAgent(t, db, "ann")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	line, release := outside(t, path, true)
	if line != "agents: 1" {
		t.Fatalf("outside process: %q, want agents: 1", line)
	}
	_, err := Open(context.Background(), path, Options{BusyTimeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), path+": database is locked: another process has the file open") || !strings.Contains(err.Error(), "close that process") {
		t.Errorf("Open while another process has the file open: %v, want a refusal naming %s", err, path)
	}
	release()
	openDB(t, path)
}
