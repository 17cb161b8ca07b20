package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/agenthub/hub/internal/admission"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// MaxRESTBody bounds a REST request body: 1 MiB holds the largest message
// body (64 KiB by default, --max-body) even with every character escaped
// in JSON. A larger body is answered 413 without being decoded.
const MaxRESTBody = 1 << 20

// guard checks a REST call before its body is read: a missing or unknown
// token is answered 401 (without reading the body; 503 when the store
// cannot tell), a body over MaxRESTBody 413, a URL that is not UTF-8 or a
// JSON body followed by more data 400. Only the Authorization header
// carries the token; on a join it carries a join code. The
// caller the token must be is the one the admission of the route's RPC
// names (routes); a path no route matches takes any known token, so that
// only a caller with one learns which paths exist. The gate makes both
// checks (admission.Gate.Precheck), with the texts every entry point
// answers.
func guard(next http.Handler, rt *routes, opts Options) http.Handler {
	refused := func(r *http.Request, reason string) {
		if opts.Refused != nil {
			opts.Refused(r, reason)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(grpcMetadataAuthorization)
		auth := r.Header.Values("Authorization")
		if len(auth) > 1 {
			writeError(w, http.StatusBadRequest, 3, "more than one Authorization header: send exactly one, \"Authorization: Bearer <token>\"")
			return
		}
		token := bearerToken(auth)
		who := admission.Agent | admission.Person | admission.Admin
		if rule, ok := admission.Lookup(rt.method(r)); ok {
			who = rule.Who
		}
		var err error
		switch {
		case opts.Gate != nil:
			err = opts.Gate.Precheck(r.Context(), who, token, r.RemoteAddr)
		case who == admission.Joiner:
			err = status.Error(codes.Unavailable, "this hub does not accept join codes over REST")
		}
		if err != nil {
			refused(r, status.Convert(err).Message())
			admission.WriteHTTP(w, err, token != "")
			return
		}
		if msg := invalidURL(r); msg != "" {
			writeError(w, http.StatusBadRequest, 3, msg)
			return
		}
		if r.ContentLength > MaxRESTBody {
			writeError(w, http.StatusRequestEntityTooLarge, 8, tooLarge(r.ContentLength))
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRESTBody))
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				writeError(w, http.StatusRequestEntityTooLarge, 8, tooLarge(-1))
				return
			case err != nil:
				writeError(w, http.StatusBadRequest, 3, "could not read the request body: "+err.Error())
				return
			}
			if msg := trailingData(b); msg != "" {
				writeError(w, http.StatusBadRequest, 3, msg)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
		}
		next.ServeHTTP(w, r)
	})
}

// invalidURL returns an error message when the request's path or query,
// percent-decoded, is not valid UTF-8 (a name or filter no request message
// can hold), "" otherwise.
func invalidURL(r *http.Request) string {
	if !utf8.ValidString(r.URL.Path) {
		return "the URL path is not valid UTF-8: percent-encode names as UTF-8"
	}
	if q, err := url.QueryUnescape(r.URL.RawQuery); err == nil && !utf8.ValidString(q) {
		return "the URL query is not valid UTF-8: percent-encode values as UTF-8"
	}
	return ""
}

// grpcMetadataAuthorization would reach the gRPC server as "authorization"
// beside the Authorization header: it is dropped so only one header counts.
const grpcMetadataAuthorization = "Grpc-Metadata-Authorization"

func tooLarge(n int64) string {
	if n < 0 {
		return fmt.Sprintf("request body too large: the limit is %d bytes (1 MiB)", MaxRESTBody)
	}
	return fmt.Sprintf("request body too large: %d bytes, the limit is %d bytes (1 MiB)", n, MaxRESTBody)
}

// trailingData returns an error message when b is one JSON value followed
// by anything but white space, "" otherwise (an invalid first value is left
// for the JSON decoder to report).
func trailingData(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return ""
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Sprintf("unexpected data after the JSON body at byte %d: send exactly one JSON object", dec.InputOffset())
	}
	return ""
}

func bearerToken(values []string) string {
	if len(values) == 0 {
		return ""
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(values[0]), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// writeError answers in the gateway's error format ({"code", "message",
// "details"}, code a gRPC code).
func writeError(w http.ResponseWriter, httpStatus, grpcCode int, msg string) {
	writeJSON(w, httpStatus, map[string]any{"code": grpcCode, "message": msg, "details": []any{}})
}
