// Package castore keeps the certificate authorities of the hubs this user
// trusts, one PEM file per hub address in the user's configuration
// directory, and fetches a hub's CA pinned by its fingerprint: what `hub
// setup` does with a join line, and what `hub mcp`, `hub hook`, `hub
// guard` and hubctl read to talk TLS to that hub. It imports nothing of
// ours, so the API client may link it.
package castore

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// Prefix starts every fingerprint: the hash it names.
const Prefix = "sha256:"

// Fingerprint is the SHA-256 of a certificate's DER bytes as
// "sha256:" and 64 lower-case hex digits.
func Fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	return Prefix + hex.EncodeToString(sum[:])
}

// ParseFingerprint checks a fingerprint as a user gives it
// ("sha256:" and 64 hex digits, either case) and returns it in the form
// Fingerprint makes.
func ParseFingerprint(s string) (string, error) {
	hexPart, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(s)), Prefix)
	if b, err := hex.DecodeString(hexPart); !ok || err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("CA fingerprint %q: give sha256: and 64 hex digits, as hubctl info or the join line prints it", s)
	}
	return Prefix + hexPart, nil
}

// Dir is where the CAs are kept: agent-hub/ca in the user's configuration
// directory ($XDG_CONFIG_HOME, else ~/.config, on Linux).
func Dir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place for the hub's CA: %w", err)
	}
	return filepath.Join(dir, "agent-hub", "ca"), nil
}

// File is the file holding the CA of the hub at addr ("host:port"): the
// address with every character other than a letter, a digit, '.' or '-'
// turned into '_', then ".pem".
func File(addr string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	name := strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToLower(addr))
	return filepath.Join(dir, name+".pem"), nil
}

// ClientConfig returns the TLS configuration for the hub at addr when its
// CA is stored: the hub's certificate must chain to that CA (and only to
// it) and name the host of addr. It returns nil when no CA is stored for
// addr, and an error when the stored file cannot be read or holds no
// certificate.
func ClientConfig(addr string) (*tls.Config, error) {
	path, err := File(addr)
	if err != nil {
		return nil, nil // no config dir: nothing was stored either
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the CA of the hub at %s: %w", addr, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("the CA file of the hub at %s, %s, holds no PEM certificate: delete it and run the join line again", addr, path)
	}
	return &tls.Config{RootCAs: pool, ServerName: host(addr), MinVersion: tls.VersionTLS12}, nil
}

// Store keeps caPEM as the CA of the hub at addr (mode 0600, its directory
// created 0700), replacing the one kept before.
func Store(addr string, caPEM []byte) (string, error) {
	path, err := File(addr)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create the CA's directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("keep the hub's CA: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	defer tmp.Close()
	if _, err := tmp.Write(caPEM); err != nil {
		return "", fmt.Errorf("keep the hub's CA: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("keep the hub's CA: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("keep the hub's CA: %w", err)
	}
	return path, nil
}

// MismatchError is a hub whose CA is not the one its fingerprint was
// pinned to.
type MismatchError struct {
	Addr           string
	Expected, Seen string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("the hub at %s presents a CA with fingerprint %s, not the expected %s: refused (check the address; ask the hub's admin for the line hubctl join-codes create prints)", e.Addr, e.Seen, e.Expected)
}

// Fetch connects to the hub at addr over TLS and returns its CA as PEM
// when the CA's fingerprint is fingerprint: the hub sends its CA as the
// last certificate of its chain; Fetch checks that certificate's
// fingerprint against the pinned one, then the hub's certificate against
// that CA alone, for the host of addr. A CA with another fingerprint is a
// *MismatchError.
func Fetch(ctx context.Context, addr, fingerprint string) ([]byte, error) {
	want, err := ParseFingerprint(fingerprint)
	if err != nil {
		return nil, err
	}
	var ca *x509.Certificate
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain is checked below against the pinned CA, not the
		// system's roots.
		InsecureSkipVerify: true,
		NextProtos:         []string{"h2"},
		VerifyConnection: func(cs tls.ConnectionState) error {
			certs := cs.PeerCertificates
			if len(certs) < 2 {
				return fmt.Errorf("the hub at %s sends no CA with its certificate: is it a hub serving TLS with its own CA (not --tls-cert)?", addr)
			}
			last := certs[len(certs)-1]
			if seen := Fingerprint(last); subtle.ConstantTimeCompare([]byte(seen), []byte(want)) != 1 {
				return &MismatchError{Addr: addr, Expected: want, Seen: seen}
			}
			roots := x509.NewCertPool()
			roots.AddCert(last)
			inter := x509.NewCertPool()
			for _, c := range certs[1 : len(certs)-1] {
				inter.AddCert(c)
			}
			if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: host(addr)}); err != nil {
				return fmt.Errorf("the hub's certificate does not verify with its CA: %w", err)
			}
			ca = last
			return nil
		},
	}
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		var mm *MismatchError
		if errors.As(err, &mm) {
			return nil, mm
		}
		return nil, fmt.Errorf("fetch the CA of the hub at %s over TLS: %w", addr, err)
	}
	conn.Close()
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), nil
}

// host is the host of addr, without brackets; addr itself when it has no
// port.
func host(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return strings.Trim(addr, "[]")
	}
	return h
}
