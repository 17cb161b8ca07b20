package mcpbridge_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/castore"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/tlsca"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// TestDialWithKeptCA: a hub serving TLS with a certificate of the hub's own
// CA is reached by Dial once that CA is kept for its address (castore),
// and not in plain text before. The join line that keeps it, across two
// network namespaces, is test/joinnet's.
func TestDialWithKeptCA(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	ca, err := tlsca.Open(dir, []string{"127.0.0.1"}, hub.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	h := startHub(t, func(m *app.Main) {
		m.TLSCert, m.TLSKey = filepath.Join(dir, tlsca.CertFile), filepath.Join(dir, tlsca.CertKey)
	})
	tok := h.createAgent(t, "remote")
	status := func() error {
		conn, err := mcpbridge.Dial(h.GRPCAddress(), tok)
		if err != nil {
			return err
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = hubv1.NewAgentServiceClient(conn).GetStatus(ctx, &hubv1.GetStatusRequest{})
		return err
	}
	if err := status(); err == nil {
		t.Fatal("Dial reached a TLS hub in plain text")
	}
	pem, err := os.ReadFile(filepath.Join(dir, tlsca.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := castore.Store(h.GRPCAddress(), pem); err != nil {
		t.Fatal(err)
	}
	if err := status(); err != nil {
		t.Fatalf("Dial with the hub's CA kept (%s): %v", ca.Fingerprint(), err)
	}
}
