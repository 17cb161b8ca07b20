package app_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/datadir"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// startMain starts a hub on dir with mod applied, returning the error of Start.
func startMain(t *testing.T, dir string, mod func(*app.Main)) (*app.Main, error) {
	t.Helper()
	m := app.NewMain()
	m.DataDir, m.GRPCAddr, m.HTTPAddr = dir, "127.0.0.1:0", "off"
	m.Logger = slog.New(slog.DiscardHandler)
	m.NoOrchestrator = true
	if mod != nil {
		mod(m)
	}
	err := m.Start(context.Background())
	if err == nil {
		t.Cleanup(func() { m.Close() })
	}
	return m, err
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// Every file the hub creates is 0600 and the data dir 0700; a backup too.
// A relative backup path or a missing directory is a clear InvalidArgument.
func TestFileModes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	m, err := startMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	relCreateAgent(t, m, "alice") // a write: the WAL exists
	if got := mode(t, dir); got != 0o700 {
		t.Errorf("data dir mode %#o, want 0700", got)
	}
	for _, f := range []string{"hub.db", "hub.db-wal", "admin.token", "hub.lock"} {
		if got := mode(t, filepath.Join(dir, f)); got != 0o600 {
			t.Errorf("%s mode %#o, want 0600", f, got)
		}
	}
	// The log's index is in the hub's memory (the store's VFS, unix-excl).
	if _, err := os.Stat(filepath.Join(dir, "hub.db-shm")); !os.IsNotExist(err) {
		t.Errorf("stat hub.db-shm: %v, want no such file", err)
	}
	admin := hubv1.NewAdminServiceClient(m.Conn())
	ctx := bearer(context.Background(), relAdminToken(t, m))
	backup := filepath.Join(t.TempDir(), "copy.db")
	if _, err := admin.Backup(ctx, &hubv1.BackupRequest{Path: backup}); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, backup); got != 0o600 {
		t.Errorf("backup mode %#o, want 0600", got)
	}
	for _, tc := range []struct{ path, want string }{
		{"relative.db", "is relative"},
		{filepath.Join(t.TempDir(), "missing", "copy.db"), "does not exist"},
	} {
		_, err := admin.Backup(ctx, &hubv1.BackupRequest{Path: tc.path})
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), tc.want) {
			t.Errorf("backup to %s: %v, want InvalidArgument %q", tc.path, err, tc.want)
		}
	}
}

// A data dir whose database was deleted is refused, not silently started
// empty; --init starts it empty on purpose.
func TestDeletedDatabaseRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m, err := startMain(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	relCreateAgent(t, m, "alice")
	m.Close()
	for _, f := range []string{"hub.db", "hub.db-wal", "hub.db-shm"} {
		os.Remove(filepath.Join(dir, f))
	}
	if _, err := startMain(t, dir, nil); err == nil || !strings.Contains(err.Error(), "has no hub.db") || !strings.Contains(err.Error(), "--init") {
		t.Fatalf("start without the database: %v, want a refusal pointing to --init", err)
	}
	if _, err := startMain(t, dir, func(m *app.Main) { m.Init = true }); err != nil {
		t.Fatalf("start with --init: %v", err)
	}
}

// The admin token must come from a regular file with at least 32 bytes of
// secret: a symlink or a one-character token is refused, in the data dir
// and through --admin-token-file alike.
func TestAdminTokenFile(t *testing.T) {
	t.Parallel()
	good := strings.Repeat("s3cret-", 6)
	write := func(t *testing.T, path, s string) {
		if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		tokFile := filepath.Join(t.TempDir(), "admin")
		write(t, tokFile, good)
		m, err := startMain(t, t.TempDir(), func(m *app.Main) { m.AdminTokenPath = tokFile })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(datadir.AdminTokenFile(m.DataDir)); err == nil {
			t.Error("admin.token was written although --admin-token-file was given")
		}
		if _, err := hubv1.NewAdminServiceClient(m.Conn()).GetHubInfo(bearer(context.Background(), good), &hubv1.GetHubInfoRequest{}); err != nil {
			t.Errorf("admin call with the file's token: %v", err)
		}
	})
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir, tokFile string)
		viaFlag bool
		want    string
	}{
		{"one character", func(t *testing.T, _, f string) { write(t, f, "x") }, true, "at least 32 bytes"},
		{"symlink", func(t *testing.T, dir, f string) {
			write(t, filepath.Join(dir, "real"), good)
			if err := os.Symlink(filepath.Join(dir, "real"), f); err != nil {
				t.Fatal(err)
			}
		}, true, "not a regular file"},
		{"one character in the data dir", func(t *testing.T, dir, _ string) { write(t, datadir.AdminTokenFile(dir), "x") }, false, "at least 32 bytes"},
		{"symlink in the data dir", func(t *testing.T, dir, _ string) {
			real := filepath.Join(t.TempDir(), "real")
			write(t, real, good)
			if err := os.Symlink(real, datadir.AdminTokenFile(dir)); err != nil {
				t.Fatal(err)
			}
		}, false, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tokFile := filepath.Join(t.TempDir(), "admin")
			tc.setup(t, dir, tokFile)
			_, err := startMain(t, dir, func(m *app.Main) {
				m.Init = true // no database yet, on purpose
				if tc.viaFlag {
					m.AdminTokenPath = tokFile
				}
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("start: %v, want a refusal saying %q", err, tc.want)
			}
		})
	}
}

// A data dir open to other users is reported once at start.
func TestOpenDataDirWarned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	if _, err := startMain(t, dir, func(m *app.Main) { m.Logger = slog.New(slog.NewTextHandler(&logs, nil)) }); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "open to other users"); n != 1 {
		t.Errorf("%d warnings about the open data dir, want 1:\n%s", n, logs.String())
	}
}
