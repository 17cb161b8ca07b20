// Package dashboard serves the hub's web page at / (embedded assets, no
// other origin), the API docs page at /docs, and the live change stream the
// page listens to. The page speaks only the public REST API with the admin
// token; the stream says which topics changed and carries the agents' rows
// that changed (rows.go), in the shape the REST API gives them.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/hub"
)

//go:embed static
var static embed.FS

// StreamPath is the route of the live change stream (Server-Sent Events).
const StreamPath = "/v1/admin/stream"

// Options configure a Dashboard.
type Options struct {
	// Feed announces changes (hub.Service.Feed).
	Feed *hub.Feed
	// Gate checks the admin token of the stream's requests.
	Gate *admission.Gate
	// Watch and Rows, when both are set, put the agents' changed rows on
	// the stream (rows.go): Watch finds them (hub.Service.WatchOverviews,
	// one per feed), Rows writes them as the REST API does
	// (server.Server.OverviewsToProto).
	Watch *hub.OverviewWatch
	Rows  func([]hub.AgentOverview) []*hubv1.AgentOverview
	// FullPassEvery, when positive, reads every row this often and sends
	// those that changed: the changes made through another replica of a
	// shared store reach this hub's feed only that way.
	FullPassEvery time.Duration
	// Clock runs the streams' pings and gaps and the rows' scans (the
	// system clock when nil).
	Clock hub.Clock
}

const (
	// changeGap is the least time between two change events of one stream:
	// changes in between are merged into one event.
	changeGap = 200 * time.Millisecond
	// pingEvery is the period of keep-alive comments on an idle stream, so
	// that the page notices a dead connection.
	pingEvery = 15 * time.Second
)

// Dashboard serves the page, the docs and the stream.
type Dashboard struct {
	opts    Options
	assets  http.Handler
	closing chan struct{}
	once    sync.Once
	rows    *rowCaster // nil without Options.Watch
	done    sync.WaitGroup
}

// New returns a Dashboard. With Options.Watch it starts the goroutine that
// sends the changed rows; Close ends it.
func New(opts Options) *Dashboard {
	sub, _ := fs.Sub(static, "static") // cannot fail: the directory is embedded
	if opts.Clock == nil {
		opts.Clock = hub.SystemClock{}
	}
	d := &Dashboard{opts: opts, assets: http.FileServerFS(sub), closing: make(chan struct{})}
	if opts.Watch != nil && opts.Rows != nil {
		d.rows = newRowCaster(opts, d.closing)
		d.done.Go(d.rows.run)
	}
	return d
}

// Routes returns the dashboard's handlers by http.ServeMux pattern.
func (d *Dashboard) Routes() map[string]http.Handler {
	page := func(name string) http.Handler {
		b, _ := static.ReadFile("static/" + name) // embedded: cannot fail
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(b)
		})
	}
	return map[string]http.Handler{
		"GET /{$}":          secure(page("index.html")),
		"GET /assets/":      secure(noListing(d.assets)),
		"GET /docs":         secure(page("docs.html")),
		"GET " + StreamPath: secure(http.HandlerFunc(d.stream)),
	}
}

// Close ends every open stream (call it when the HTTP server shuts down, so
// that streams do not hold the shutdown up) and the rows' goroutine. It is
// idempotent.
func (d *Dashboard) Close() {
	d.once.Do(func() { close(d.closing) })
	d.done.Wait()
}

// noListing answers 404 for directories instead of listing them.
func noListing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// contentSecurityPolicy allows only this origin, no inline script, no
// framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// secure adds the safety headers to every response of h.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		if !strings.HasPrefix(r.URL.Path, "/assets/") {
			hd.Set("Cache-Control", "no-cache")
		}
		h.ServeHTTP(w, r)
	})
}
