package admission

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/status"
)

// BearerToken returns the token of an HTTP request's Authorization header
// ("Bearer <token>"), "" when there is none.
func BearerToken(h http.Header) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// WriteHTTP answers an HTTP request the gate refused, in the REST API's
// error format ({"code", "message", "details"}, code a gRPC code): the
// refusal's gRPC code as HTTP status, WWW-Authenticate on 401 (naming the
// token invalid when one was given) and Retry-After when the refusal says
// when to retry.
func WriteHTTP(w http.ResponseWriter, err error, tokenGiven bool) {
	st := status.Convert(err)
	code := runtime.HTTPStatusFromCode(st.Code())
	h := w.Header()
	if secs := RetryAfterSeconds(err); secs != "" {
		h.Set("Retry-After", secs)
	}
	if code == http.StatusUnauthorized {
		if tokenGiven {
			h.Set("WWW-Authenticate", `Bearer realm="agent-hub", error="invalid_token"`)
		} else {
			h.Set("WWW-Authenticate", `Bearer realm="agent-hub"`)
		}
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // "<agent token>" reads as written
	enc.Encode(map[string]any{"code": int(st.Code()), "message": st.Message(), "details": []any{}})
}
