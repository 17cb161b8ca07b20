package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/loopback"
	"github.com/agenthub/hub/internal/tlsca"
)

// TLS: a key pair given with --tls-cert and --tls-key, else the hub's own
// CA when an address is beyond loopback, unless --insecure.

// checkAddrs refuses half a key pair: both files or neither.
func (m *Main) checkAddrs() error {
	if (m.TLSCert == "") != (m.TLSKey == "") {
		return fmt.Errorf("give both --tls-cert and --tls-key, or neither (the hub then serves TLS with its own CA on an address beyond loopback)")
	}
	return nil
}

// usesOwnCA reports whether the hub serves TLS with its own CA: no key pair
// given, not --insecure, and an address that is not loopback.
func (m *Main) usesOwnCA() bool {
	if m.Insecure || m.TLSCert != "" {
		return false
	}
	for _, addr := range m.listenAddrs() {
		if !loopback.Addr(addr) {
			return true
		}
	}
	return false
}

// listenAddrs are the addresses the hub listens on.
func (m *Main) listenAddrs() []string {
	addrs := []string{m.GRPCAddr}
	if m.HTTPAddr != "" && m.HTTPAddr != "off" {
		addrs = append(addrs, m.HTTPAddr)
	}
	return addrs
}

// caDir is where the hub's own CA is kept: <data-dir>/tls.
func (m *Main) caDir() string { return datadir.TLSDir(m.DataDir) }

// loadTLS returns the listeners' TLS configuration: the key pair given,
// else the hub's own CA's when usesOwnCA; nil means plain TCP.
func (m *Main) loadTLS() (*tls.Config, error) {
	if m.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(m.TLSCert, m.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("load TLS key pair (--tls-cert %s, --tls-key %s): %w", m.TLSCert, m.TLSKey, err)
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
	}
	if !m.usesOwnCA() {
		return nil, nil
	}
	ca, err := tlsca.Open(m.caDir(), tlsca.Hosts(m.listenAddrs(), m.TLSHosts), m.Clock)
	if err != nil {
		return nil, fmt.Errorf("the hub's own CA in %s (or give --tls-cert and --tls-key): %w", m.caDir(), err)
	}
	m.ca = ca
	return ca.ServerConfig(), nil
}

// caFingerprint is the fingerprint of the hub's own CA, "" when it does
// not serve with one.
func (m *Main) caFingerprint() string {
	if m.ca == nil {
		return ""
	}
	return m.ca.Fingerprint()
}

// startRenewal renews the server certificate of the hub's own CA before it
// expires, checked on the hub's clock until runCtx ends.
func (m *Main) startRenewal(runCtx context.Context) {
	if m.ca == nil {
		return
	}
	m.goRun(func() error {
		return m.ca.Run(runCtx, func(notAfter time.Time, err error) {
			if err != nil {
				m.Logger.Error("renew the hub's TLS certificate (tried again later)", "err", err, "cert_expires", notAfter.UTC().Format(time.RFC3339))
				return
			}
			m.Logger.Info("renewed the hub's TLS certificate", "cert_expires", notAfter.UTC().Format(time.RFC3339))
		})
	})
}
