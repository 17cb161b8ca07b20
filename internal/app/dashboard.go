package app

import (
	"context"
	"net/http"
	"time"

	"github.com/agenthub/hub/internal/dashboard"
)

// newDashboard creates the web page at /, the docs at /docs and the live
// change stream with the agents' changed rows, and adds their routes to
// extra. Register its Close with the HTTP server's shutdown too, so that
// open streams do not hold it up.
func (m *Main) newDashboard(extra map[string]http.Handler) *dashboard.Dashboard {
	opts := dashboard.Options{Feed: m.Services.Core.Feed(), Gate: m.Gate,
		Watch: m.Services.Liveness.WatchOverviews(), Rows: m.Server.OverviewsToProto, Clock: m.Clock}
	if m.watchPosts != nil {
		// Replicas share the store: what another one's callers change is
		// found by reading every row now and then.
		opts.FullPassEvery = 30 * time.Second
	}
	d := dashboard.New(opts)
	// Close ends the goroutine that reads the rows, before the store closes.
	m.extras = append(m.extras, func(context.Context) error { d.Close(); return nil })
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
	if m.TLSCert != "" || m.ca != nil {
		scheme = "https"
	}
	return scheme + "://" + m.HTTPAddress() + "/"
}
