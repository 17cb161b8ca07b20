// Package tlsca is the hub's own certificate authority: made on the first
// start in the data dir, it signs the certificate the hub serves gRPC and
// HTTP with on an address beyond loopback when no certificate is given,
// and renews that certificate before it expires. Agents pin the CA by its
// fingerprint (castore).
package tlsca

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agenthub/hub/internal/castore"
	"github.com/agenthub/hub/internal/hub"
)

// The lifetimes: the CA lives ten years, a server certificate 90 days and
// is renewed once less than 30 days are left, checked every CheckEvery.
const (
	CALifetime   = 10 * 365 * 24 * time.Hour
	CertLifetime = 90 * 24 * time.Hour
	RenewBefore  = 30 * 24 * time.Hour
	CheckEvery   = 12 * time.Hour
)

// The files in the CA's directory (datadir.TLSDir; datadir.CAFile names the
// CA's certificate for hubctl): the CA's certificate and key, the server's
// certificate and key. Keys are 0600.
const (
	CAFile   = "ca.pem"
	CAKey    = "ca.key"
	CertFile = "server.pem"
	CertKey  = "server.key"
)

// Authority is the hub's CA with the server certificate it signed.
type Authority struct {
	dir   string
	hosts []string // names and addresses the server certificate is for
	clock hub.Clock

	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	cert  atomic.Pointer[tls.Certificate]
}

// Open loads the CA from dir, making it (and dir, 0700) when it is not
// there, and loads the server certificate, issuing a new one when there is
// none, when it does not name every one of hosts, or when it is due for
// renewal. hosts are IP addresses or DNS names.
func Open(dir string, hosts []string, clock hub.Clock) (*Authority, error) {
	a := &Authority{dir: dir, hosts: hosts, clock: clock}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the CA's directory %s: %w", dir, err)
	}
	if err := a.loadCA(); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, CertKey))
	if err == nil && a.fits(cert) {
		a.cert.Store(&cert)
	}
	if _, err := a.Renew(); err != nil {
		return nil, err
	}
	return a, nil
}

// Fingerprint is the CA's SHA-256 fingerprint (castore.Fingerprint).
func (a *Authority) Fingerprint() string { return castore.Fingerprint(a.ca) }

// ServerConfig is the TLS configuration of the hub's listeners: the
// current server certificate, sent with the CA after it so that a client
// can pin the CA (castore.Fetch).
func (a *Authority) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return a.cert.Load(), nil
		},
	}
}

// NotAfter is when the current server certificate expires.
func (a *Authority) NotAfter() time.Time { return a.cert.Load().Leaf.NotAfter }

// Renew issues a new server certificate when there is none or the current
// one expires within RenewBefore; it reports whether it did.
func (a *Authority) Renew() (bool, error) {
	if c := a.cert.Load(); c != nil && a.clock.Now().Add(RenewBefore).Before(c.Leaf.NotAfter) {
		return false, nil
	}
	if err := a.issue(); err != nil {
		return false, fmt.Errorf("issue the hub's TLS certificate: %w", err)
	}
	return true, nil
}

// Run checks every CheckEvery whether the server certificate is due for
// renewal and renews it, until ctx ends. A failed renewal is logged by
// onRenew and tried again at the next check.
func (a *Authority) Run(ctx context.Context, onRenew func(notAfter time.Time, err error)) error {
	t := a.clock.NewTicker(CheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			if renewed, err := a.Renew(); renewed || err != nil {
				onRenew(a.NotAfter(), err)
			}
		}
	}
}

// loadCA reads the CA's certificate and key, or makes them when neither
// file exists.
func (a *Authority) loadCA() error {
	certPath, keyPath := filepath.Join(a.dir, CAFile), filepath.Join(a.dir, CAKey)
	certPEM, err := os.ReadFile(certPath)
	if errors.Is(err, fs.ErrNotExist) {
		if _, kerr := os.Stat(keyPath); kerr == nil {
			return fmt.Errorf("%s is there but %s is not: restore the CA's certificate or remove both to make a new CA (every agent must then join again)", keyPath, certPath)
		}
		return a.makeCA(certPath, keyPath)
	}
	if err != nil {
		return fmt.Errorf("read the hub's CA: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, mustRead(keyPath))
	if err != nil {
		return fmt.Errorf("load the hub's CA (%s, %s): %w", certPath, keyPath, err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return fmt.Errorf("the hub's CA key %s is not an ECDSA key", keyPath)
	}
	a.ca, a.caKey = pair.Leaf, key
	return nil
}

// mustRead returns the file's bytes, or none when it cannot be read (the
// key pair's parse then says what is missing).
func mustRead(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// makeCA makes a new CA and writes its key, then its certificate.
func (a *Authority) makeCA(certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := a.clock.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Agent Hub CA " + now.UTC().Format("2006-01-02T15:04:05Z")},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CALifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("make the hub's CA: %w", err)
	}
	if err := writeKey(keyPath, key); err != nil {
		return err
	}
	if err := writeFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	a.ca, _ = x509.ParseCertificate(der)
	a.caKey = key
	return nil
}

// issue signs a new server certificate for a.hosts and makes it current.
func (a *Authority) issue() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := a.clock.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "Agent Hub"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(CertLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range a.hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.ca, &key.PublicKey, a.caKey)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(a.dir, CertKey), key); err != nil {
		return err
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.ca.Raw})...)
	if err := writeFile(filepath.Join(a.dir, CertFile), chain, 0o644); err != nil {
		return err
	}
	leaf, _ := x509.ParseCertificate(der)
	a.cert.Store(&tls.Certificate{Certificate: [][]byte{der, a.ca.Raw}, PrivateKey: key, Leaf: leaf})
	return nil
}

// fits reports whether cert was signed by the CA, is sent with it, and
// names every one of the hosts.
func (a *Authority) fits(cert tls.Certificate) bool {
	if cert.Leaf == nil || len(cert.Certificate) != 2 || cert.Leaf.CheckSignatureFrom(a.ca) != nil || !slices.Equal(cert.Certificate[1], a.ca.Raw) {
		return false
	}
	for _, h := range a.hosts {
		if cert.Leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// Hosts are the names and addresses the server certificate is for: the
// hosts of the listen addresses, every address of this machine's
// interfaces and its host name when one listens on all of them (0.0.0.0,
// [::] or no host), localhost and the loopback addresses, and extra
// (--tls-hosts), each once.
func Hosts(listen []string, extra []string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	all := false
	for _, addr := range listen {
		h, _, err := net.SplitHostPort(addr)
		if err != nil {
			continue
		}
		if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() {
			all = true
			continue
		}
		hosts = append(hosts, h)
	}
	if all {
		if ifaddrs, err := net.InterfaceAddrs(); err == nil {
			for _, ia := range ifaddrs {
				if ipn, ok := ia.(*net.IPNet); ok && !ipn.IP.IsLinkLocalUnicast() {
					hosts = append(hosts, ipn.IP.String())
				}
			}
		}
		if name, err := os.Hostname(); err == nil && name != "" {
			hosts = append(hosts, name)
		}
	}
	for _, h := range extra {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, strings.Trim(h, "[]"))
		}
	}
	var out []string
	for _, h := range hosts {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// serial is a random 128-bit serial number.
func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	return n
}

// writeKey writes key as a PEM "EC PRIVATE KEY" file, mode 0600.
func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writeFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// writeFile writes b to path through a temporary file in its directory,
// flushed and renamed, with the given mode.
func writeFile(path string, b []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
