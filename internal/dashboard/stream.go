package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/version"
)

// stream serves the live change stream: Server-Sent Events saying which
// topics changed ("messages", "agents", "tick", "inbox"), merged so that a
// stream carries at most one event per changeGap, but for inbox changes,
// which go at once (a person, and maybe a hook, waits for them); and, when
// the dashboard has a rowCaster, the agents' rows that changed ("agents"
// events, rows.go; "resync" when this stream fell behind and lost some). It needs the admin token
// or a person token in the Authorization header (never in the URL: the page reads the stream with
// fetch, which can send headers, unlike EventSource); a person's streams are bounded and end when
// the person is revoked (hub/park.go).
//
// streamAdmission is the RPC whose admission the stream takes: the stream
// says which of the views changed, and the agents' overviews are one.
const streamAdmission = hubv1.AdminService_ListAgentOverviews_FullMethodName

func (d *Dashboard) stream(w http.ResponseWriter, r *http.Request) {
	token := admission.BearerToken(r.Header)
	epoch := d.opts.Feed.Epoch() // before the check: a revocation after it ends the stream (hub.Waiters.Epoch)
	who, err := d.opts.Gate.AuthorizeFor(r.Context(), streamAdmission, token)
	if err != nil {
		admission.WriteHTTP(w, err, token != "")
		return
	}
	owner := hub.Principal{} // the admin
	if who.Person != nil {
		owner = hub.PersonPrincipal(who.Person.Name)
	}
	sub, err := d.opts.Feed.Subscribe(owner, epoch)
	if err != nil {
		var he *hub.Error
		if errors.As(err, &he) && he.Code == hub.EUNAUTHORIZED { // revoked since its check
			writeError(w, http.StatusUnauthorized, 16, he.Message)
			return
		}
		if errors.As(err, &he) && he.Code == hub.EEXHAUSTED {
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusTooManyRequests, 8, he.Message)
			return
		}
		writeError(w, http.StatusInternalServerError, 13, "subscribe to changes failed")
		return
	}
	defer sub.Close()
	var rows *sink
	var rowsC <-chan []byte // nil (never ready) without rows
	// The rows are every agent's, the same event for every stream: a
	// person of some projects only has the page read them again through
	// the API, which keeps that person's projects.
	if d.rows != nil && who.Person.SeesAll() {
		rows = d.rows.join()
		defer d.rows.leave(rows)
		rowsC = rows.c
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	clock := d.opts.Clock
	send := func(s string) bool { return writeWithin(w, clock, pingEvery+10*time.Second, []byte(s)) }
	// An event of rows goes out as the row caster made it, for every stream
	// alike: not copied per stream.
	sendRows := func(ev []byte) bool { return writeWithin(w, clock, pingEvery+10*time.Second, ev) }
	// The page reconnects by itself; "retry" is for EventSource-like clients.
	hello := map[string]any{"version": version.Version(), "deltas": rows != nil}
	if !send(fmt.Sprintf("retry: 5000\nevent: hello\ndata: %s\n\n", mustJSON(hello))) {
		return
	}
	ping := clock.NewTicker(pingEvery)
	defer ping.Stop()
	var held hub.Topics      // changes merged into the next event
	var gap <-chan time.Time // running after each event: nil when none runs
	var gapTimer hub.Timer
	defer func() {
		if gapTimer != nil {
			gapTimer.Stop()
		}
	}()
	for {
		// Within the gap only an inbox change, for which a person (and
		// maybe a hook) waits, wakes the stream: the others stay pending in
		// the subscription until the gap ends, instead of waking the stream
		// at each of the hundreds of changes a second of a busy hub.
		topics := sub.C()
		if gap != nil {
			topics = nil
		}
		select {
		case <-r.Context().Done():
			return
		case <-d.closing:
			return
		case <-sub.Done(): // its person was revoked, or the hub stops
			return
		case <-ping.C():
			if !send(": ping\n\n") {
				return
			}
			continue
		case ev := <-rowsC:
			if !sendRows(ev) {
				return
			}
			if rows.lost.Swap(false) && !send("event: resync\ndata: {}\n\n") {
				return
			}
			continue
		case <-topics:
			select {
			case <-sub.Inbox(): // an inbox change among them: taken now
			default:
			}
			if held |= sub.Take(); held == 0 {
				continue
			}
		case <-sub.Inbox():
			if held |= sub.Take(); held == 0 {
				continue
			}
		case <-gap:
			gap = nil
			if held |= sub.Take(); held == 0 {
				continue
			}
		}
		if !send(fmt.Sprintf("event: change\ndata: %s\n\n", mustJSON(map[string]any{"topics": held.Names()}))) {
			return
		}
		held = 0
		if gapTimer == nil {
			gapTimer = clock.NewTimer(changeGap)
		} else {
			gapTimer.Reset(changeGap)
		}
		gap = gapTimer.C()
	}
}

// writeWithin writes b to the stream w and flushes it, and reports whether
// that worked within limit on clock. Each write has its own limit: the
// server's WriteTimeout, cleared here, would otherwise end every stream
// after a minute or so. When the limit passes on clock, the connection's
// deadline is put in the past, which fails the write under way.
func writeWithin(w http.ResponseWriter, clock hub.Clock, limit time.Duration, b []byte) bool {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{})
	var mu sync.Mutex
	done := false
	expire := clock.AfterFunc(limit, func() {
		mu.Lock()
		defer mu.Unlock()
		if !done { // a late call must not cut the next write
			rc.SetWriteDeadline(longAgo)
		}
	})
	defer func() {
		expire.Stop()
		mu.Lock()
		done = true
		mu.Unlock()
	}()
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// longAgo is a deadline already past (net/http's aLongTimeAgo).
var longAgo = time.Unix(1, 0)

// writeError answers in the gateway's error shape ({code, message,
// details}), so the page reads every refusal the same way.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(mustJSON(map[string]any{"code": code, "message": msg, "details": []any{}})))
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v) // maps of strings and string slices always marshal
	return string(b)
}
