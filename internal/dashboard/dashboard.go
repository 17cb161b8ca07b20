// Package dashboard serves the hub's web page at / (embedded assets, no
// other origin), the API docs page at /docs, and the live change stream the
// page listens to. The page speaks only the public REST API with the admin
// token; the stream says what changed, never the data itself.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

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
}

// New returns a Dashboard.
func New(opts Options) *Dashboard {
	sub, _ := fs.Sub(static, "static") // cannot fail: the directory is embedded
	return &Dashboard{opts: opts, assets: http.FileServerFS(sub), closing: make(chan struct{})}
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
// that streams do not hold the shutdown up). It is idempotent.
func (d *Dashboard) Close() {
	d.once.Do(func() { close(d.closing) })
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
