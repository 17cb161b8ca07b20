package mcpbridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/hub"
)

// HTTPHandler serves MCP over streamable HTTP. Mount it at /mcp.
//
// Every HTTP request must carry "Authorization: Bearer <agent token>"
// (401 otherwise). A session is bound to the token that opened it: the
// hub checks the token when the session starts, a request with another
// token on that session is refused (403), and every tool call is made
// with that token, so two sessions with two tokens are two agents.
//
// A token holds at most Options.MaxSessionsPerToken sessions (opening one
// more closes its oldest), sessions idle for Options.SessionTimeout are
// closed, and closing a session (DELETE /mcp) cancels its tool calls in
// flight, a parked wait_for_messages included, and answers at once; a
// session its client closes so ends the agent's session in the hub
// (EndSession): it shows offline at once. When the agent's token is
// revoked (EndAgent), its sessions take no more requests and close once
// the calls they had in flight have answered.
type HTTPHandler struct {
	handler  http.Handler
	closer   http.Handler // the SDK's handler, for the DELETEs the handler sends itself (closeAs)
	sessions *sessionTracker
	gate     *admission.Gate
	client   hubv1.AgentServiceClient
	log      *slog.Logger
	clock    hub.Clock
}

// NewHTTPHandlerWithClient returns a streamable HTTP MCP handler that calls
// the hub through client (the hub's in-process connection), which must not
// carry credentials of its own: the handler adds each session's token to
// every call.
func NewHTTPHandlerWithClient(client hubv1.AgentServiceClient, opts Options) *HTTPHandler {
	opts = opts.withDefaults()
	b := &bridge{client: client, opts: opts, callContext: tokenFromRequest}
	server := newServer(b)
	sessions := newSessionTracker(opts.MaxSessionsPerToken, opts.SessionTimeout, opts.Clock.Now)
	server.AddReceivingMiddleware(sessions.middleware)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{
			Logger:                       opts.Logger,
			SessionTimeout:               opts.SessionTimeout,
			PropagateRequestCancellation: true,
			// A call's answer is one application/json body rather than an
			// SSE stream per POST (no event framing, no flush before the
			// end): less CPU per call. What a call sends before its answer
			// (wait_for_messages' progress) goes on the session's GET
			// stream, which the SDK clients (TypeScript, Go) open.
			JSONResponse: true,
		})
	// ServeHTTP checks the token of a request that opens a session with
	// the gate; the SDK then binds the session to it.
	verify := func(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{
			UserID:     tokenUser(token),
			Expiration: opts.Clock.Now().Add(24 * time.Hour),
		}, nil
	}
	requireToken := auth.RequireBearerToken(verify, nil)
	// The handler's own DELETEs name the session's user, not a token;
	// they never come from the network.
	asUser := auth.RequireBearerToken(func(_ context.Context, user string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: user, Expiration: opts.Clock.Now().Add(time.Minute)}, nil
	}, nil)
	return &HTTPHandler{handler: requireToken(mcpHandler), closer: asUser(mcpHandler), sessions: sessions, gate: opts.Gate, client: client, log: opts.Logger, clock: opts.Clock}
}

// sessionAdmission is the RPC whose admission a session's opening takes:
// a session acts as one agent, whose status is the first thing it reads.
const sessionAdmission = hubv1.AgentService_GetStatus_FullMethodName

// tokenUser is the user a session belongs to: the token's SHA-256, so the
// token itself is not kept in the session table.
func tokenUser(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Sessions returns the number of streamable HTTP sessions open.
func (h *HTTPHandler) Sessions() int { return h.sessions.Count() }

// SessionsEvicted returns the number of sessions closed because their
// token opened more than Options.MaxSessionsPerToken.
func (h *HTTPHandler) SessionsEvicted() int64 { return h.sessions.evicted.Load() }

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token := admission.BearerToken(r.Header)
	sid := r.Header.Get(sessionIDHeader)
	// A request that opens a session is checked in full, so a wrong token
	// fails at connect time rather than at the first tool; a request on a
	// session must carry the token that opened it (the SDK checks).
	var agentID int64
	if token == "" || (h.gate != nil && sid == "" && r.Method == http.MethodPost) {
		var err error
		if h.gate != nil {
			var who admission.Caller
			who, err = h.gate.AuthorizeFor(r.Context(), sessionAdmission, token)
			if who.Agent != nil {
				agentID = who.Agent.ID
			}
		} else if token == "" {
			err = status.Error(codes.Unauthenticated, "missing token: send \"Authorization: Bearer <agent token>\"")
		}
		if err != nil {
			admission.WriteHTTP(w, err, token != "")
			return
		}
	}
	user := tokenUser(token)
	switch {
	case sid != "" && r.Method == http.MethodDelete:
		// Cancel the session's calls first: the SDK closes a session only
		// once its calls have returned.
		h.sessions.end(sid, user)
	case sid != "":
		if ok, closeNow := h.sessions.enter(sid, r.Method == http.MethodGet); !ok {
			if closeNow {
				go h.closeAs(sid, user)
			}
			admission.WriteHTTP(w, status.Error(codes.Unauthenticated, errSessionRevoked), true)
			return
		}
		if r.Method != http.MethodGet {
			defer h.sessions.leave(sid)
		}
	}
	sw := &sessionWriter{ResponseWriter: w}
	var victims []string
	if sid == "" {
		// A new session is recorded when its headers are written, before
		// the client can read its ID: a call the client sends next is then
		// always tracked, so closing the session cancels it.
		sw.opened = func(id string) { victims = h.sessions.opened(id, user, agentID) }
	}
	h.handler.ServeHTTP(sw, r)
	for _, old := range victims {
		h.closeSession(r, old)
	}
	if sid != "" && sw.status == http.StatusNotFound {
		h.sessions.end(sid, user) // expired in the SDK
	}
	if sid != "" && r.Method == http.MethodDelete && sw.status < http.StatusMultipleChoices {
		// The client closed its session: the agent's session ended cleanly.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		if _, err := h.client.EndSession(ctx, &hubv1.EndSessionRequest{}); err != nil {
			h.log.Debug("mcp: end the agent's session after DELETE", "err", err)
		}
	}
}

// closeSession closes session id, opened with r's token, through the SDK's
// own DELETE.
func (h *HTTPHandler) closeSession(r *http.Request, id string) {
	req, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), http.MethodDelete, r.URL.String(), nil)
	if err != nil {
		return
	}
	req.Host = r.Host // the SDK's DNS-rebinding check reads it
	req.Header.Set("Authorization", r.Header.Get("Authorization"))
	req.Header.Set(sessionIDHeader, id)
	h.handler.ServeHTTP(&discardWriter{h: http.Header{}}, req)
}

// errSessionRevoked answers a request on a session whose token was revoked.
const errSessionRevoked = "the hub revoked this session's token (or rotated it, or disabled or deleted its agent): open a new session with the agent's current token"

// revokedDrain is how long a revoked session stays open for its client to
// read the answers of the calls it had in flight (their answers and the
// session's end travel on two connections: closing it first could lose
// them); a call that has not answered by then is cancelled.
const revokedDrain = 5 * time.Second

// EndAgent ends the sessions of the agent whose token was revoked: they
// take no more requests (401), and each closes at once when it has no call
// in flight, else once its client makes another request after their
// answers (a parked wait_for_messages answers its refused token first), at
// the latest after revokedDrain. It does not block.
func (h *HTTPHandler) EndAgent(agentID int64) {
	now, draining := h.sessions.revokeAgent(agentID)
	for _, s := range now {
		go h.closeAs(s.id, s.user)
	}
	for _, s := range draining {
		h.clock.AfterFunc(revokedDrain, func() {
			if h.sessions.closeRevoked(s) {
				h.closeAs(s.id, s.user)
			}
		})
	}
}

// closeAs closes session id of user: its calls still in flight are
// cancelled, and the SDK closes it (its GET stream ends).
func (h *HTTPHandler) closeAs(id, user string) {
	h.sessions.end(id, user)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, "/mcp", nil)
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+user)
	req.Header.Set(sessionIDHeader, id)
	h.closer.ServeHTTP(&discardWriter{h: http.Header{}}, req)
}

// tokenFromRequest attaches the bearer token of the HTTP request that
// carried req to the outgoing gRPC context.
func tokenFromRequest(ctx context.Context, req *mcp.CallToolRequest) (context.Context, error) {
	var tok string
	if req != nil && req.Extra != nil {
		tok = admission.BearerToken(req.Extra.Header)
	}
	if tok == "" {
		return nil, errors.New("no agent token on this request: send Authorization: Bearer <agent token>")
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok), nil
}
