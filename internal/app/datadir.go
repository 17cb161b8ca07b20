package app

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/hub"
)

// The data dir holds the SQLite file, the admin token (unless
// --admin-token-file names one elsewhere) and hub.lock, which the running
// hub holds locked (flock) with its PID inside: one hub per data dir.

// minAdminTokenLen is the shortest admin token accepted from a file.
const minAdminTokenLen = 32

// lockDataDir takes the data dir's lock (datadir.Lock); the refusal says
// what to do about the other hub.
func lockDataDir(dir string) (f *os.File, existed bool, err error) {
	f, existed, err = datadir.Lock(dir)
	if inUse := (*datadir.InUseError)(nil); errors.As(err, &inUse) {
		err = fmt.Errorf("%w, or give this one another --data-dir", err)
	}
	return f, existed, err
}

// warnOpenDataDir warns once when the data dir can be read or entered by
// other users: it holds the database and the admin token.
func (m *Main) warnOpenDataDir() {
	fi, err := os.Stat(m.DataDir)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return
	}
	m.Logger.Warn("the data dir is open to other users: it holds the database and the admin token; run chmod 700 on it",
		"data_dir", m.DataDir, "mode", fmt.Sprintf("%#o", fi.Mode().Perm()))
}

// checkDatabasePresent refuses to start an empty hub in a data dir where a
// hub ran before (admin token or lock file present) but whose database is
// gone: that is a deleted or moved database, not a new hub.
func (m *Main) checkDatabasePresent(ranBefore bool) error {
	if m.Init {
		return nil
	}
	if _, err := os.Stat(datadir.AdminTokenFile(m.DataDir)); err == nil {
		ranBefore = true
	}
	db := filepath.Join(m.DataDir, "hub.db")
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) && ranBefore {
		return fmt.Errorf("the data dir %s was used by a hub before but has no hub.db: the database was deleted or moved. Put it back (or a backup made with `hubctl backup`) as %s, or start an empty hub here on purpose with --init", m.DataDir, db)
	}
	return nil
}

// adminToken returns the admin token: read from --admin-token-file when
// given, else from the data dir, where the first start creates it.
func (m *Main) adminToken() (token string, created bool, err error) {
	if m.AdminTokenPath != "" {
		token, err = readSecretFile(m.AdminTokenPath, "--admin-token-file")
		return token, false, err
	}
	path := datadir.AdminTokenFile(m.DataDir)
	if _, err := os.Lstat(path); err == nil {
		token, err = readSecretFile(path, "the admin token file")
		return token, false, err
	}
	return ensureAdminToken(path)
}

// readSecretFile reads a token from path: a regular file (not a symlink)
// holding at least minAdminTokenLen bytes of secret.
func readSecretFile(path, what string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s %s is not a regular file (%s): give the file itself, not a link or a device", what, path, fi.Mode().Type())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, path, err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < minAdminTokenLen || strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("%s %s holds %d bytes: an admin token must be one line of at least %d bytes of secret (e.g. `openssl rand -base64 33`)", what, path, len(token), minAdminTokenLen)
	}
	return token, nil
}

// adminTokenMetaKey is where the store keeps the admin token's hash.
const adminTokenMetaKey = "admin_token_sha256"

// recordAdminToken stores the admin token's hash in the store, so that the
// store says which admin token its hubs accept.
func (m *Main) recordAdminToken(ctx context.Context, hash []byte) error {
	return m.Store.Update(ctx, func(tx hub.Tx) error { return tx.SetMeta(adminTokenMetaKey, hex.EncodeToString(hash)) })
}
