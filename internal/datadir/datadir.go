// Package datadir names the hub's data directory and the files in it that
// both the server and hubctl know about. It imports only the standard
// library, so hubctl does not link the server to find the admin token.
package datadir

import (
	"os"
	"path/filepath"
)

// Default returns $HUB_DATA_DIR, else $XDG_DATA_HOME/hub, else ~/.local/share/hub.
func Default() string {
	if d := os.Getenv("HUB_DATA_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "hub")
	}
	return ".hub"
}

// AdminTokenFile is where the admin token lives in a data dir.
func AdminTokenFile(dir string) string { return filepath.Join(dir, "admin.token") }

// TLSDir is where the hub's own CA and the certificate it signed live in a
// data dir.
func TLSDir(dir string) string { return filepath.Join(dir, "tls") }

// CAFile is the hub's own CA certificate in a data dir: hubctl on the
// hub's machine trusts it for an address beyond loopback.
func CAFile(dir string) string { return filepath.Join(TLSDir(dir), "ca.pem") }
