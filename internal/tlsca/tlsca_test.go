package tlsca

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/castore"
	"github.com/agenthub/hub/internal/hub"
)

var start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func open(t *testing.T, dir string, hosts []string, clock hub.Clock) *Authority {
	t.Helper()
	a, err := Open(dir, hosts, clock)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return a
}

func current(t *testing.T, a *Authority) *tls.Certificate {
	t.Helper()
	c, err := a.ServerConfig().GetCertificate(&tls.ClientHelloInfo{})
	if err != nil || c == nil {
		t.Fatalf("GetCertificate: %v, %v", c, err)
	}
	return c
}

// TestOpenMakesCA: the first Open makes a P-256 CA and a server
// certificate for the hosts, signed by it and sent with it; the keys and
// the directory are private.
func TestOpenMakesCA(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "tls")
	a := open(t, dir, []string{"10.77.0.1", "hub.example", "localhost"}, hub.NewFakeClock(start))

	for name, want := range map[string]os.FileMode{CAKey: 0o600, CertKey: 0o600, CAFile: 0o644, CertFile: 0o644, ".": 0o700} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s has mode %v, want %v", name, got, want)
		}
	}
	c := current(t, a)
	if len(c.Certificate) != 2 {
		t.Fatalf("the chain sent holds %d certificates, want the server's and the CA's", len(c.Certificate))
	}
	ca, err := x509.ParseCertificate(c.Certificate[1])
	if err != nil {
		t.Fatal(err)
	}
	if !ca.IsCA || ca.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("CA: IsCA %v, key %v; want a CA with an ECDSA key", ca.IsCA, ca.PublicKeyAlgorithm)
	}
	if got := castore.Fingerprint(ca); got != a.Fingerprint() || len(got) != len("sha256:")+64 {
		t.Errorf("Fingerprint %q, the CA sent hashes to %q", a.Fingerprint(), got)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, h := range []string{"10.77.0.1", "hub.example", "localhost"} {
		if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: h, CurrentTime: start}); err != nil {
			t.Errorf("the server certificate does not verify for %s: %v", h, err)
		}
	}
	if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "10.77.0.2", CurrentTime: start}); err == nil {
		t.Error("the server certificate verifies for a host it was not made for")
	}
	if got, want := a.NotAfter(), start.Add(CertLifetime); !got.Equal(want) {
		t.Errorf("NotAfter %v, want %v", got, want)
	}
}

// TestOpenReuses: a second Open keeps the CA and the certificate; new
// hosts get a new certificate from the same CA.
func TestOpenReuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := hub.NewFakeClock(start)
	a := open(t, dir, []string{"10.77.0.1"}, clock)
	first := current(t, a)

	clock.Advance(24 * time.Hour)
	b := open(t, dir, []string{"10.77.0.1"}, clock)
	if b.Fingerprint() != a.Fingerprint() {
		t.Fatalf("the CA changed on reopening: %s, then %s", a.Fingerprint(), b.Fingerprint())
	}
	if !slices.Equal(current(t, b).Certificate[0], first.Certificate[0]) {
		t.Error("the server certificate was reissued though it was neither due nor short of a host")
	}

	c := open(t, dir, []string{"10.77.0.1", "hub.example"}, clock)
	if c.Fingerprint() != a.Fingerprint() {
		t.Fatal("the CA changed when a host was added")
	}
	if err := current(t, c).Leaf.VerifyHostname("hub.example"); err != nil {
		t.Errorf("a host added at start is not in the certificate: %v", err)
	}
}

// TestRenewal: the server certificate is renewed once fewer than
// RenewBefore are left, at start and by Run's timer on the hub's clock.
func TestRenewal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := hub.NewFakeClock(start)
	a := open(t, dir, []string{"10.77.0.1"}, clock)
	first := a.NotAfter()

	// At start: reopened past the renewal point.
	clock.Set(first.Add(-RenewBefore + time.Minute))
	b := open(t, dir, []string{"10.77.0.1"}, clock)
	if !b.NotAfter().After(first) {
		t.Fatalf("reopened %v before expiry, the certificate still expires %v", RenewBefore, b.NotAfter())
	}
	if b.Fingerprint() != a.Fingerprint() {
		t.Fatal("renewal changed the CA")
	}

	// By the timer.
	ctx, cancel := context.WithCancel(context.Background())
	renewed := make(chan time.Time, 1)
	done := make(chan error, 1)
	go func() {
		done <- b.Run(ctx, func(notAfter time.Time, err error) {
			if err != nil {
				t.Errorf("renewal: %v", err)
			}
			renewed <- notAfter
		})
	}()
	second := b.NotAfter()
	for clock.Timers() == 0 { // Run's ticker is set
		time.Sleep(time.Millisecond)
	}
	clock.Advance(CheckEvery) // not due yet: no renewal
	clock.Set(second.Add(-RenewBefore))
	clock.Advance(CheckEvery)
	select {
	case got := <-renewed:
		if !got.After(second) || !b.NotAfter().Equal(got) {
			t.Errorf("renewed to %v (current %v), want after %v", got, b.NotAfter(), second)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not renew a certificate due for renewal")
	}
	if len(renewed) != 0 {
		t.Error("Run renewed more than once")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The renewed certificate is on disk: a restart serves it.
	c := open(t, dir, []string{"10.77.0.1"}, clock)
	if !c.NotAfter().Equal(b.NotAfter()) {
		t.Errorf("after a restart the certificate expires %v, the renewed one %v", c.NotAfter(), b.NotAfter())
	}
}

// TestOpenRefusesLoneKey: a CA key without its certificate is not
// replaced by a new CA silently.
func TestOpenRefusesLoneKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open(t, dir, nil, hub.NewFakeClock(start))
	if err := os.Remove(filepath.Join(dir, CAFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, nil, hub.NewFakeClock(start)); err == nil {
		t.Fatal("Open made a new CA beside the old key")
	}
}

func TestHosts(t *testing.T) {
	t.Parallel()
	got := Hosts([]string{"10.77.0.1:7700", "10.77.0.1:7701"}, []string{"hub.example", " [fd00::1] "})
	want := []string{"localhost", "127.0.0.1", "::1", "10.77.0.1", "hub.example", "fd00::1"}
	if !slices.Equal(got, want) {
		t.Errorf("Hosts = %q, want %q", got, want)
	}
	all := Hosts([]string{"0.0.0.0:7700"}, nil)
	if len(all) <= 3 {
		t.Errorf("Hosts on 0.0.0.0 = %q, want this machine's addresses too", all)
	}
}
