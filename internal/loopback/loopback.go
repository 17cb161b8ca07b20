// Package loopback tells whether an address or a host name stays on this
// machine: the hub binds there by default, refuses Host names that are not
// (DNS rebinding) and hubctl warns before sending a token anywhere else. It
// imports nothing of ours, so the API client may link it.
package loopback

import (
	"net"
	"net/netip"
	"strings"
)

// Host reports whether host (without a port) names this machine only:
// "localhost", a name under ".localhost", or a loopback address (IPv6 in
// brackets or not).
func Host(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.Unmap().IsLoopback()
}

// Addr reports whether addr ("host:port") is on this machine only.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && Host(host)
}
