package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/version"
	"google.golang.org/grpc/metadata"
)

// startHTTPHub boots a real hub on loopback port 0 with its HTTP server.
func startHTTPHub(tb testing.TB, mod func(*app.Main)) *app.Main {
	tb.Helper()
	m := app.NewMain()
	m.DataDir = tb.TempDir()
	m.GRPCAddr, m.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	m.NoOrchestrator = true
	m.Logger = slog.New(slog.DiscardHandler)
	if mod != nil {
		mod(m)
	}
	if err := m.Start(context.Background()); err != nil {
		tb.Fatalf("start hub: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// health runs `hub health ARGS…` in process.
func health(args ...string) (stdout string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), append([]string{"health"}, args...), &out, &errOut)
	return out.String(), err
}

func TestHealthReady(t *testing.T) {
	t.Parallel()
	m := startHTTPHub(t, nil)
	addr := m.HTTPAddress()
	out, err := health("--addr", addr)
	if err != nil || out != "ready\n" {
		t.Fatalf("hub health --addr %s = %q, %v; want ready", addr, out, err)
	}
	// The hub's own listen flag works as is: a wildcard is asked on loopback.
	_, port, _ := net.SplitHostPort(addr)
	for _, listen := range []string{"0.0.0.0:" + port, ":" + port} {
		if out, err := health("--addr", listen, "--timeout", "2s"); err != nil || out != "ready\n" {
			t.Errorf("hub health --addr %s = %q, %v; want ready", listen, out, err)
		}
	}
}

// A hub whose disk is full is up but not ready: hub health says so.
func TestHealthNotReady(t *testing.T) {
	t.Parallel()
	m := startHTTPHub(t, func(m *app.Main) { m.MaxDBSize = 512 << 10 })
	ctx := context.Background()
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	r, err := hubv1.NewAdminServiceClient(m.Conn()).CreateAgent(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+adminTok), &hubv1.CreateAgentRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+r.GetToken())
	agent := hubv1.NewAgentServiceClient(m.Conn())
	var postErr error
	for i := 0; i < 100 && postErr == nil; i++ {
		_, postErr = agent.PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"alice"}, Body: strings.Repeat("z", 32<<10)})
	}
	if postErr == nil || !strings.Contains(postErr.Error(), "disk full") {
		t.Fatalf("posts into a 512 KiB database: %v, want disk full", postErr)
	}
	out, err := health("--addr", m.HTTPAddress())
	if err == nil || !strings.Contains(err.Error(), "not ready: disk full") {
		t.Fatalf("hub health on a full disk = %q, %v; want an error saying not ready: disk full", out, err)
	}
	if out != "" {
		t.Errorf("hub health printed %q on stdout when not ready", out)
	}
}

func TestHealthRefusals(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	// Something that is not a hub answers on this one.
	notHub := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })}
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go notHub.Serve(nl)
	t.Cleanup(func() { notHub.Close() })

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", closed}, "connection refused (is the hub running with --http-addr " + closed + "? give its HTTP address with --addr"},
		{[]string{"--addr", nl.Addr().String()}, "answered 404 Not Found, not the hub's readiness"},
		{[]string{"--addr", "localhost"}, `--addr "localhost": give HOST:PORT`},
		{[]string{"--timeout", "0s"}, "--timeout 0s: give a positive duration"},
		{[]string{"extra"}, "hub health takes flags only"},
		{[]string{"--tls-ca", filepath.Join(t.TempDir(), "missing.pem")}, "--tls-ca: open"},
	} {
		out, err := health(tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("hub health %q = %q, %v; want an error containing %q", tt.args, out, err, tt.want)
		}
	}
}

func TestHealthTLS(t *testing.T) {
	t.Parallel()
	cert, key := selfSignedCert(t)
	m := startHTTPHub(t, func(m *app.Main) { m.TLSCert, m.TLSKey = cert, key })
	addr := m.HTTPAddress()
	if out, err := health("--addr", addr, "--tls-ca", cert); err != nil || out != "ready\n" {
		t.Errorf("hub health --tls-ca over TLS = %q, %v; want ready", out, err)
	}
	if _, err := health("--addr", addr, "--tls"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("hub health --tls with a certificate no system root signed: %v, want a certificate error", err)
	}
	if _, err := health("--addr", addr); err == nil || !strings.Contains(err.Error(), "add --tls if it serves TLS") {
		t.Errorf("hub health in plain HTTP against TLS: %v, want an error naming --tls", err)
	}
}

// The built binary: exit code 0 when ready, 1 when not reached, as a
// container's HEALTHCHECK reads them; and the version it prints.
func TestHealthBinary(t *testing.T) {
	t.Parallel()
	bin := builtHub(t)
	m := startHTTPHub(t, nil)
	out, err := exec.Command(bin, "health", "--addr", m.HTTPAddress()).CombinedOutput()
	if err != nil || string(out) != "ready\n" {
		t.Errorf("hub health: %v, %q; want exit 0 and ready", err, out)
	}
	out, err = exec.Command(bin, "health", "--addr", closedPort(t)).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "connection refused") {
		t.Errorf("hub health on a closed port: %v, %q; want exit code 1 saying connection refused", err, out)
	}
	out, err = exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "hub ") || !strings.Contains(string(out), "\n  go      "+runtime.Version()+" ") {
		t.Errorf("hub version: %v, %q; want the version, commit, date and Go version", err, out)
	}
}

// The served /metrics names the build.
func TestBuildInfoServed(t *testing.T) {
	t.Parallel()
	m := startHTTPHub(t, nil)
	resp, err := http.Get("http://" + m.HTTPAddress() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	commit := version.Commit()
	if commit == "" {
		commit = "unknown"
	}
	want := fmt.Sprintf("hub_build_info{commit=%q,goversion=%q,version=%q} 1\n", commit, runtime.Version(), version.Version())
	if !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %q", want)
	}
}

// selfSignedCert writes a certificate for 127.0.0.1 and its key, and
// returns their paths.
func selfSignedCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "hub health test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
