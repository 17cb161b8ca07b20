package gateway

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/agenthub/hub/internal/loopback"
)

// hostGuard refuses a request whose Host, or whose Origin when it has one,
// names a host that allow refuses: a page on another name that resolves
// to the hub's address (DNS rebinding) is answered 403 before anything
// runs. An Origin is what browsers send; programs that call the API send
// none, and a request without one is judged by its Host alone.
func hostGuard(next http.Handler, allow func(host string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host := hostOnly(r.Host); !allow(host) {
			writeError(w, http.StatusForbidden, 7, fmt.Sprintf(
				"host %q is not served by this hub: use its loopback address, or start the hub with --http-allowed-hosts %s", host, host))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host == "" || !allow(hostOnly(u.Host)) {
				writeError(w, http.StatusForbidden, 7, fmt.Sprintf(
					"origin %q may not call this hub: pages of other sites cannot use its API (start the hub with --http-allowed-hosts to allow a name)", origin))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hostOnly returns host without its port, lower case, without the
// brackets of an IPv6 address.
func hostOnly(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(strings.Trim(h, "[]"))
}

// AllowHosts returns the Host policy of a hub: on a loopback listener,
// names of loopback and the names given; on any other listener, the names
// given, or every name when none is given (nil). A name given may start
// with "*." for its subdomains.
func AllowHosts(loopbackListener bool, names []string) func(host string) bool {
	if !loopbackListener && len(names) == 0 {
		return nil
	}
	exact, suffixes := map[string]bool{}, []string(nil)
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			suffixes = append(suffixes, "."+rest)
		} else if n != "" {
			exact[hostOnly(n)] = true
		}
	}
	return func(host string) bool {
		if exact[host] || (loopbackListener && loopback.Host(host)) {
			return true
		}
		for _, s := range suffixes {
			if strings.HasSuffix(host, s) {
				return true
			}
		}
		return false
	}
}
