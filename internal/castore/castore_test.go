package castore_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/castore"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/tlsca"
)

// serve runs a TLS server with a new hub CA on 127.0.0.1 and returns its
// address and the CA.
func serve(t *testing.T) (string, *tlsca.Authority) {
	t.Helper()
	ca, err := tlsca.Open(t.TempDir(), []string{"127.0.0.1"}, hub.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ca.ServerConfig()
	cfg.NextProtos = []string{"h2"}
	lis, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() { c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	return lis.Addr().String(), ca
}

func TestFetch(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	addr, ca := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Upper case is accepted as the same fingerprint.
	pem, err := castore.Fetch(ctx, addr, strings.ToUpper(ca.Fingerprint()))
	if err != nil {
		t.Fatalf("Fetch with the right fingerprint: %v", err)
	}
	path, err := castore.Store(addr, pem)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the stored CA %s: %v, %v; want mode 0600", path, st, err)
	}
	cfg, err := castore.ClientConfig(addr)
	if err != nil || cfg == nil {
		t.Fatalf("ClientConfig after Store: %v, %v", cfg, err)
	}
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatalf("a TLS connection with the stored CA: %v", err)
	}
	conn.Close()

	// Another hub's CA: the stored one does not verify it.
	other, _ := serve(t)
	cfg.ServerName = "127.0.0.1"
	if conn, err := tls.Dial("tcp", other, cfg); err == nil {
		conn.Close()
		t.Fatal("the stored CA verified another hub's certificate")
	}
	if cfg, err := castore.ClientConfig(other); cfg != nil || err != nil {
		t.Fatalf("ClientConfig of an address with no CA stored: %v, %v; want nil, nil", cfg, err)
	}
}

func TestFetchMismatch(t *testing.T) {
	addr, ca := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fp := ca.Fingerprint()
	flipped := fp[:len(fp)-1] + map[bool]string{true: "1", false: "0"}[fp[len(fp)-1] == '0']
	_, err := castore.Fetch(ctx, addr, flipped)
	var mm *castore.MismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("Fetch with a flipped fingerprint: %v, want a MismatchError", err)
	}
	for _, want := range []string{flipped, fp} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not name %s", err, want)
		}
	}
}

func TestFetchPlainHub(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		c, err := lis.Accept()
		if err == nil {
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := castore.Fetch(ctx, lis.Addr().String(), "sha256:"+strings.Repeat("ab", 32)); err == nil || !strings.Contains(err.Error(), "over TLS") {
		t.Fatalf("Fetch from a plain-text server: %v, want an error saying TLS failed", err)
	}
}

func TestParseFingerprint(t *testing.T) {
	t.Parallel()
	good := "sha256:" + strings.Repeat("Ab", 32)
	if got, err := castore.ParseFingerprint(good); err != nil || got != strings.ToLower(good) {
		t.Errorf("ParseFingerprint(%q) = %q, %v", good, got, err)
	}
	for _, bad := range []string{"", strings.Repeat("ab", 32), "sha256:abc", "sha1:" + strings.Repeat("ab", 32), "sha256:" + strings.Repeat("zz", 32)} {
		if _, err := castore.ParseFingerprint(bad); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
			t.Errorf("ParseFingerprint(%q): %v, want an error saying what is expected", bad, err)
		}
	}
}

func TestFile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	for addr, want := range map[string]string{
		"10.77.0.1:7700":  "/cfg/agent-hub/ca/10.77.0.1_7700.pem",
		"[fd00::1]:7700":  "/cfg/agent-hub/ca/_fd00__1__7700.pem",
		"Hub.Example:443": "/cfg/agent-hub/ca/hub.example_443.pem",
		"../../x:1":       "/cfg/agent-hub/ca/.._.._x_1.pem",
	} {
		got, err := castore.File(addr)
		if err != nil || got != want || filepath.Dir(got) != "/cfg/agent-hub/ca" {
			t.Errorf("File(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
}
