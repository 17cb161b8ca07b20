package app

import (
	"net/http"

	"github.com/agenthub/hub/internal/dashboard"
)

// newDashboard creates the web page at /, the docs at /docs and the live
// change stream, and adds their routes to extra. Register its Close with
// the HTTP server's shutdown, so that open streams do not hold it up.
func (m *Main) newDashboard(extra map[string]http.Handler) *dashboard.Dashboard {
	d := dashboard.New(dashboard.Options{Feed: m.Services.Core.Feed(), Gate: m.Gate})
	for pattern, h := range d.Routes() {
		extra[pattern] = h
	}
	return d
}

// dashboardURL is the page's address, "" when HTTP is off.
func (m *Main) dashboardURL() string {
	if m.httpLis == nil {
		return ""
	}
	scheme := "http"
	if m.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + m.HTTPAddress() + "/"
}
