package mcpbridge

import (
	"container/list"
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionTracker follows the streamable HTTP sessions the MCP handler
// holds: how many each token has (past Options.MaxSessionsPerToken the
// oldest is closed), and the tool calls in flight in each, so that closing
// a session (DELETE /mcp, eviction) cancels them at once instead of waiting
// for a parked wait_for_messages to time out.
type sessionTracker struct {
	perToken int
	idle     time.Duration // the handler's idle expiry: older sessions are gone
	now      func() time.Time

	mu        sync.Mutex
	byID      map[string]*trackedSession
	byUser    map[string]*list.List // of *trackedSession, oldest first
	lastSweep time.Time

	evicted atomic.Int64
}

type trackedSession struct {
	id, user string
	elem     *list.Element
	lastUsed time.Time
	calls    map[*context.CancelFunc]struct{} // tool calls in flight
}

func newSessionTracker(perToken int, idle time.Duration, now func() time.Time) *sessionTracker {
	return &sessionTracker{perToken: perToken, idle: idle, now: now,
		byID: map[string]*trackedSession{}, byUser: map[string]*list.List{}}
}

// Count returns the number of sessions held.
func (t *sessionTracker) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}

// opened records a new session of user and returns the IDs of the sessions
// closed to make room (their calls are already cancelled).
func (t *sessionTracker) opened(id, user string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.sweepLocked(now)
	l := t.byUser[user]
	if l == nil {
		l = list.New()
		t.byUser[user] = l
	}
	var victims []string
	for l.Len() >= t.perToken {
		old := l.Front().Value.(*trackedSession)
		t.endLocked(old)
		victims = append(victims, old.id)
		t.evicted.Add(1)
	}
	s := &trackedSession{id: id, user: user, lastUsed: now, calls: map[*context.CancelFunc]struct{}{}}
	s.elem = l.PushBack(s)
	t.byID[id] = s
	return victims
}

// touch records a request on session id.
func (t *sessionTracker) touch(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.byID[id]; s != nil {
		s.lastUsed = t.now()
	}
}

// end forgets session id of user and cancels its calls in flight; a
// session of another user is left alone (the handler refuses the request).
func (t *sessionTracker) end(id, user string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.byID[id]; s != nil && s.user == user {
		t.endLocked(s)
	}
}

func (t *sessionTracker) endLocked(s *trackedSession) {
	for cancel := range s.calls {
		(*cancel)()
	}
	s.calls = nil
	delete(t.byID, s.id)
	if l := t.byUser[s.user]; l != nil {
		l.Remove(s.elem)
		if l.Len() == 0 {
			delete(t.byUser, s.user)
		}
	}
}

// sweepLocked forgets the sessions idle past the handler's expiry (it
// closed them), at most twice per expiry period.
func (t *sessionTracker) sweepLocked(now time.Time) {
	if now.Sub(t.lastSweep) < t.idle/2 {
		return
	}
	t.lastSweep = now
	for _, s := range t.byID {
		if now.Sub(s.lastUsed) > t.idle && len(s.calls) == 0 {
			t.endLocked(s)
		}
	}
}

// callContext returns ctx cancelled when session id ends, and the function
// to call when the call returns.
func (t *sessionTracker) callContext(ctx context.Context, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byID[id]
	if s == nil || s.calls == nil {
		return ctx, cancel
	}
	key := &cancel
	s.calls[key] = struct{}{}
	s.lastUsed = t.now()
	return ctx, func() {
		t.mu.Lock()
		if s.calls != nil {
			delete(s.calls, key)
			s.lastUsed = t.now()
		}
		t.mu.Unlock()
		cancel()
	}
}

// middleware ties every request of a session to the session's life.
func (t *sessionTracker) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s := req.GetSession(); s != nil && s.ID() != "" {
			var done func()
			ctx, done = t.callContext(ctx, s.ID())
			defer done()
		}
		return next(ctx, method, req)
	}
}

// sessionWriter notes the status the handler answers with and, through
// opened, the ID it gives a new session, as the headers are written.
type sessionWriter struct {
	http.ResponseWriter
	status int
	opened func(id string) // nil unless the request may open a session
}

func (w *sessionWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		if id := w.Header().Get(sessionIDHeader); id != "" && w.opened != nil && code < http.StatusMultipleChoices {
			w.opened(id)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *sessionWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *sessionWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

const sessionIDHeader = "Mcp-Session-Id"

// discardWriter is the response writer of the DELETE the handler sends
// itself to close an evicted session.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
