package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/datadir"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and localhost
// and its key to dir, and returns their paths and a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hub test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	m := NewMain()
	m.DataDir = filepath.Join(dir, "data")
	m.GRPCAddr, m.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	m.TLSCert, m.TLSKey = certFile, keyFile
	m.NoOrchestrator = true
	m.Logger = slog.New(slog.DiscardHandler)
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	adminTok, _ := m.AdminToken()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminTok)

	t.Run("gRPC over TLS", func(t *testing.T) {
		conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		info, err := hubv1.NewAdminServiceClient(conn).GetHubInfo(ctx, &hubv1.GetHubInfoRequest{})
		if err != nil {
			t.Fatalf("GetHubInfo over TLS: %v", err)
		}
		if info.GetVersion() == "" {
			t.Error("empty hub info")
		}
	})
	t.Run("plaintext gRPC is refused", func(t *testing.T) {
		conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err = hubv1.NewAdminServiceClient(conn).GetHubInfo(cctx, &hubv1.GetHubInfoRequest{})
		if code := status.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded {
			t.Fatalf("plaintext call to a TLS hub: %v, want Unavailable", err)
		}
	})
	t.Run("gRPC with an untrusted certificate is refused", func(t *testing.T) {
		conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: x509.NewCertPool()})))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := hubv1.NewAdminServiceClient(conn).GetHubInfo(cctx, &hubv1.GetHubInfoRequest{}); status.Code(err) != codes.Unavailable {
			t.Fatalf("call trusting another CA: %v, want Unavailable", err)
		}
	})
	t.Run("HTTP over TLS", func(t *testing.T) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
		for _, path := range []string{"/healthz", "/readyz", "/v1/admin/info"} {
			req, _ := http.NewRequest("GET", "https://"+m.HTTPAddress()+path, nil)
			req.Header.Set("Authorization", "Bearer "+adminTok)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("GET %s over TLS: %v", path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s over TLS: HTTP %d %s", path, resp.StatusCode, b)
			}
		}
	})
	t.Run("plain HTTP is refused", func(t *testing.T) {
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Get("http://" + m.HTTPAddress() + "/healthz")
		if err == nil {
			defer resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Fatal("plain HTTP to a TLS hub answered 200")
			}
		}
	})
}

func TestTLSBadKeyPair(t *testing.T) {
	dir := t.TempDir()
	certFile, _, _ := selfSigned(t, dir)
	m := NewMain()
	m.DataDir = filepath.Join(dir, "data")
	m.GRPCAddr, m.HTTPAddr = "127.0.0.1:0", "off"
	m.TLSCert, m.TLSKey = certFile, filepath.Join(dir, "missing.pem")
	m.NoOrchestrator = true
	m.Logger = slog.New(slog.DiscardHandler)
	err := m.Start(context.Background())
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "--tls-key") {
		t.Fatalf("start with a missing key: %v, want an error naming --tls-key", err)
	}
}

// TestOwnCA: on an address beyond loopback with no key pair and without
// --insecure, the hub serves TLS with its own CA, made in the data dir;
// half a key pair is refused. Nothing is served on a non-loopback address
// here (the decision and the CA are checked without listening; the
// end-to-end test in test/e2e/join_netns_test.go listens).
func TestOwnCA(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		grpcAddr, httpAddr string
		tls, insecure      bool
		want               bool
	}{
		{"loopback", "127.0.0.1:0", "127.0.0.1:0", false, false, false},
		{"localhost and IPv6 loopback", "localhost:7700", "[::1]:0", false, false, false},
		{"HTTP off", "127.0.0.1:0", "off", false, false, false},
		{"gRPC on all interfaces", "0.0.0.0:0", "127.0.0.1:0", false, false, true},
		{"HTTP on all interfaces", "127.0.0.1:0", "0.0.0.0:0", false, false, true},
		{"empty host means every interface", ":7700", "off", false, false, true},
		{"a LAN address", "192.0.2.10:7700", "off", false, false, true},
		{"a host name", "hub.example:7700", "off", false, false, true},
		{"a key pair given", "0.0.0.0:0", "0.0.0.0:0", true, false, false},
		{"with --insecure", "0.0.0.0:0", "0.0.0.0:0", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := NewMain()
			m.GRPCAddr, m.HTTPAddr, m.Insecure = tc.grpcAddr, tc.httpAddr, tc.insecure
			if tc.tls {
				m.TLSCert, m.TLSKey = "cert.pem", "key.pem"
			}
			if err := m.checkAddrs(); err != nil {
				t.Fatalf("checkAddrs: %v", err)
			}
			if got := m.usesOwnCA(); got != tc.want {
				t.Errorf("usesOwnCA = %v, want %v", got, tc.want)
			}
		})
	}

	m := NewMain()
	m.DataDir = t.TempDir()
	m.GRPCAddr, m.HTTPAddr, m.TLSHosts = "192.0.2.10:7700", "off", []string{"hub.example"}
	m.setDefaults()
	cfg, err := m.loadTLS()
	if err != nil || cfg == nil || m.ca == nil {
		t.Fatalf("loadTLS on 192.0.2.10: %v, %v; want the own CA's configuration", cfg, err)
	}
	if _, err := os.Stat(datadir.CAFile(m.DataDir)); err != nil {
		t.Errorf("the CA is not where hubctl looks for it: %v", err)
	}
	if got := m.caFingerprint(); !strings.HasPrefix(got, "sha256:") {
		t.Errorf("caFingerprint = %q", got)
	}
	cert, err := cfg.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"192.0.2.10", "hub.example", "127.0.0.1"} {
		if err := cert.Leaf.VerifyHostname(h); err != nil {
			t.Errorf("the certificate does not name %s: %v", h, err)
		}
	}

	// Half a key pair: refused before anything is bound.
	half := NewMain()
	half.DataDir = t.TempDir()
	half.GRPCAddr, half.HTTPAddr, half.TLSCert = "0.0.0.0:0", "off", "cert.pem"
	half.Logger = slog.New(slog.DiscardHandler)
	err = half.Start(context.Background())
	half.Close()
	if err == nil || !strings.Contains(err.Error(), "give both --tls-cert and --tls-key") {
		t.Fatalf("Start with --tls-cert alone: %v, want the refusal", err)
	}
	if half.grpcLis != nil {
		t.Fatal("Start bound a listener before refusing")
	}
}
