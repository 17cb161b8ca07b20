package hub

import (
	"fmt"
	pathpkg "path"
	"strings"
	"time"
)

// Path reservations: an agent declares that it is working on some paths of
// the project, exclusively or shared, until a lease ends. They are advisory:
// the hub names conflicts and refuses only an exclusive reservation over
// another agent's exclusive one; the pre-commit guard (hub guard) enforces
// exclusive reservations where the work lands.
//
// Patterns are slash-separated paths relative to the project root, matched
// case-sensitively segment by segment:
//
//	*     any run of characters inside one segment (a.go, *.go, test_*)
//	?     one character inside one segment
//	**    a whole segment: zero or more segments (src/**/x.go, **/*.md)
//
// and every pattern also covers everything below what it matches, as a
// git pathspec does: "src", "src/" and "src/**" all reserve the directory
// src and its content. Refused: an empty pattern, an absolute path, a ".."
// segment, a backslash, character classes ([...]) and "**" inside a segment.

// ReservationMode says whether other agents may hold the same paths.
type ReservationMode string

// Reservation modes.
const (
	// ReservationExclusive: nobody else should change these paths. A second
	// exclusive reservation of another agent over them is refused.
	ReservationExclusive ReservationMode = "exclusive"
	// ReservationShared: others may work here too; overlaps are named.
	ReservationShared ReservationMode = "shared"
)

// Reservation limits and defaults.
const (
	DefaultReservationTTL = 30 * time.Minute
	MinReservationTTL     = 10 * time.Second
	MaxReservationTTL     = 24 * time.Hour
	maxPatternBytes       = 1024
	maxReasonBytes        = 1024
	maxPatternsPerCall    = 100
	maxReservationsHeld   = 1000 // active reservations one agent may hold
)

// Reservation is one agent's lease on the paths a pattern covers.
type Reservation struct {
	ID        int64
	AgentID   int64
	AgentName string // filled when read back
	Project   string // the holder's project, filled when read back
	Pattern   string // normalised (NormalizePattern)
	Mode      ReservationMode
	Reason    string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Exclusive reports whether r is exclusive.
func (r *Reservation) Exclusive() bool { return r.Mode == ReservationExclusive }

// Conflict is an existing reservation of another agent that overlaps a
// requested pattern.
type Conflict struct {
	Pattern  string       // the requested pattern
	Held     *Reservation // the other agent's reservation
	Refusing bool         // whether it refuses the request (exclusive over exclusive)
}

// String names the holder, what it holds and until when.
func (c Conflict) String() string {
	return fmt.Sprintf("%s overlaps %s held %s by %s until %s", c.Pattern, c.Held.Pattern, c.Held.Mode,
		c.Held.AgentName, c.Held.ExpiresAt.UTC().Format(time.RFC3339))
}

// ParseReservationMode parses "exclusive" or "shared"; "" means exclusive.
func ParseReservationMode(s string) (ReservationMode, error) {
	switch ReservationMode(s) {
	case "", ReservationExclusive:
		return ReservationExclusive, nil
	case ReservationShared:
		return ReservationShared, nil
	}
	return "", Errorf(EINVALID, "mode %q is unknown: expected exclusive or shared", s)
}

// ReservationTTL returns the lease of a request: ttl, or the default when
// ttl is zero. Errors: EINVALID outside MinReservationTTL..MaxReservationTTL.
func ReservationTTL(ttl time.Duration) (time.Duration, error) {
	if ttl == 0 {
		return DefaultReservationTTL, nil
	}
	if ttl < MinReservationTTL || ttl > MaxReservationTTL {
		return 0, Errorf(EINVALID, "ttl %s is out of range: expected %s to %s (default %s)", ttl, MinReservationTTL, MaxReservationTTL, DefaultReservationTTL)
	}
	return ttl, nil
}

// NormalizePattern checks a path or glob and returns its canonical form:
// no "./" segments, no empty segments, no trailing slash ("." alone is the
// whole project, "**"). Errors: EINVALID saying what is expected.
func NormalizePattern(p string) (string, error) {
	const expected = "expected a path or glob relative to the project root, such as src/, internal/hub/*.go or **/*.md"
	switch {
	case strings.TrimSpace(p) == "":
		return "", Errorf(EINVALID, "path is empty: %s", expected)
	case len(p) > maxPatternBytes:
		return "", Errorf(EINVALID, "path is %d bytes long; the limit is %d bytes", len(p), maxPatternBytes)
	case strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':'):
		return "", Errorf(EINVALID, "path %q is absolute: %s", p, expected)
	case strings.ContainsAny(p, "\\[]\x00\n\r"):
		return "", Errorf(EINVALID, "path %q holds a backslash, a bracket or a control character: use '/' between segments; only *, ? and ** are wildcards", p)
	}
	var segs []string
	for _, s := range strings.Split(p, "/") {
		switch {
		case s == "" || s == ".":
			continue
		case s == "..":
			return "", Errorf(EINVALID, "path %q holds '..': reservations stay inside the project; %s", p, expected)
		case s != "**" && strings.Contains(s, "**"):
			return "", Errorf(EINVALID, "path %q holds ** inside a segment: ** stands alone between slashes (src/**/x.go); use * within a segment", p)
		}
		if s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return "**", nil
	}
	return strings.Join(segs, "/"), nil
}

// MatchPattern reports whether the normalised pattern covers path (a file or
// directory path relative to the project root): the pattern matches path or
// one of its parent directories.
func MatchPattern(pattern, path string) bool {
	ps := strings.Split(pattern, "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	for k := len(xs); k >= 1; k-- {
		if matchSegments(ps, xs[:k]) {
			return true
		}
	}
	return false
}

// matchSegments matches pattern segments against path segments exactly.
func matchSegments(ps, xs []string) bool {
	if len(ps) == 0 {
		return len(xs) == 0
	}
	if ps[0] == "**" {
		for i := 0; i <= len(xs); i++ {
			if matchSegments(ps[1:], xs[i:]) {
				return true
			}
		}
		return false
	}
	if len(xs) == 0 {
		return false
	}
	// Patterns hold no [, ] or \ (NormalizePattern), so path.Match reads
	// the name literally, whatever characters it holds.
	ok, err := pathpkg.Match(ps[0], xs[0])
	return ok && err == nil && matchSegments(ps[1:], xs[1:])
}

// PatternsOverlap reports whether some path is covered by both normalised
// patterns, so that reserving both means working on the same files. A
// pattern that ran out covers everything below: the other one can always be
// extended to a path under it.
func PatternsOverlap(a, b string) bool {
	return intersect(strings.Split(a, "/"), strings.Split(b, "/"), func(s string) bool { return s == "**" }, segmentsOverlap, true)
}

// segmentsOverlap reports whether one segment name matches both segment
// globs (made of literal characters, ? and *).
func segmentsOverlap(a, b string) bool {
	return intersect([]rune(a), []rune(b), func(r rune) bool { return r == '*' },
		func(p, q rune) bool { return p == '?' || q == '?' || p == q }, false)
}

// intersect reports whether some sequence matches both token sequences x
// and y, where a star token matches any run of tokens (none included) and
// two other tokens match the same one when same says so. With open, a
// sequence that ran out matches whatever follows.
func intersect[T any](x, y []T, star func(T) bool, same func(a, b T) bool, open bool) bool {
	memo := map[[2]int]bool{}
	var ov func(i, j int) bool
	ov = func(i, j int) bool {
		if (i == len(x) && j == len(y)) || (open && (i == len(x) || j == len(y))) {
			return true
		}
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		var v bool
		switch {
		case i < len(x) && star(x[i]): // matches nothing, or eats y's next token
			v = ov(i+1, j) || (j < len(y) && ov(i, j+1))
		case j < len(y) && star(y[j]):
			v = ov(i, j+1) || (i < len(x) && ov(i+1, j))
		case i < len(x) && j < len(y):
			v = same(x[i], y[j]) && ov(i+1, j+1)
		}
		memo[k] = v
		return v
	}
	return ov(0, 0)
}

// ReservationRequest is one call to ReservePaths: patterns (normalised), a
// mode, a lease and a reason.
type ReservationRequest struct {
	Patterns []string
	Mode     ReservationMode
	TTL      time.Duration
	Reason   string
}

// ReservationDecision is what DecideReservation says a request does: the
// caller's reservations to add and those to renew in place (the same
// pattern held again), and the other agents' overlapping reservations.
type ReservationDecision struct {
	Insert    []*Reservation
	Update    []*Reservation
	Conflicts []Conflict
}

// DecideReservation decides the request of agent (id, name) at now against
// the active reservations held. A pattern the agent already holds is
// renewed with the new mode, lease and reason; the agent's own reservations
// never conflict with it. Another agent's overlapping reservation is a
// conflict; it refuses the whole request (EPRECONDITION naming each holder,
// pattern and expiry, nothing written) when both are exclusive. A shared
// request over an exclusive one, and an exclusive request over shared ones,
// are granted with the conflicts named.
func DecideReservation(agentID int64, agentName string, req ReservationRequest, held []*Reservation, now time.Time) (ReservationDecision, error) {
	var d ReservationDecision
	mine := map[string]*Reservation{}
	own := 0
	for _, h := range held {
		if h.AgentID == agentID {
			mine[h.Pattern] = h
			own++
		}
	}
	var refusals []string
	for _, p := range req.Patterns {
		for _, h := range held {
			if h.AgentID == agentID || !PatternsOverlap(p, h.Pattern) {
				continue
			}
			c := Conflict{Pattern: p, Held: h, Refusing: h.Exclusive() && req.Mode == ReservationExclusive}
			d.Conflicts = append(d.Conflicts, c)
			if c.Refusing {
				refusals = append(refusals, c.String())
			}
		}
		r := &Reservation{AgentID: agentID, AgentName: agentName, Pattern: p, Mode: req.Mode, Reason: req.Reason, CreatedAt: now, ExpiresAt: now.Add(req.TTL)}
		if old := mine[p]; old != nil {
			r.ID, r.CreatedAt = old.ID, old.CreatedAt
			d.Update = append(d.Update, r)
		} else {
			d.Insert = append(d.Insert, r)
		}
	}
	if len(refusals) > 0 {
		return ReservationDecision{Conflicts: d.Conflicts}, Errorf(EPRECONDITION, "exclusive reservation refused, nothing reserved: %s; wait for the expiry, ask the holder to release, or reserve shared", strings.Join(refusals, "; "))
	}
	if own+len(d.Insert) > maxReservationsHeld {
		return ReservationDecision{}, Errorf(EEXHAUSTED, "an agent may hold %d reservations at once; you hold %d: release some or reserve a directory instead of its files", maxReservationsHeld, own)
	}
	return d, nil
}

// validateReservationRequest normalises req's patterns in place and checks
// its other fields. Errors: EINVALID.
func validateReservationRequest(req *ReservationRequest) error {
	if len(req.Patterns) == 0 {
		return Errorf(EINVALID, "paths are required: give one or more paths or globs relative to the project root, such as src/ or **/*.md")
	}
	if len(req.Patterns) > maxPatternsPerCall {
		return Errorf(EINVALID, "%d paths in one call; the limit is %d: reserve a directory or a glob instead", len(req.Patterns), maxPatternsPerCall)
	}
	seen := map[string]bool{}
	out := req.Patterns[:0:0]
	for _, p := range req.Patterns {
		n, err := NormalizePattern(p)
		if err != nil {
			return err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	req.Patterns = out
	var err error
	if req.Mode, err = ParseReservationMode(string(req.Mode)); err != nil {
		return err
	}
	if req.TTL, err = ReservationTTL(req.TTL); err != nil {
		return err
	}
	if err := checkLine("reason", req.Reason); err != nil {
		return err
	}
	return validateAgentText("reason", req.Reason, maxReasonBytes)
}

// FilterReservations returns the reservations of rs that overlap at least
// one of the normalised patterns (all of rs when there are none).
func FilterReservations(rs []*Reservation, patterns []string) []*Reservation {
	if len(patterns) == 0 {
		return rs
	}
	var out []*Reservation
	for _, r := range rs {
		for _, p := range patterns {
			if PatternsOverlap(r.Pattern, p) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// ReleaseAbandoned reports whether an agent's reservations should be
// released: it is disabled, or it made no call for releaseAfter and has no
// parked wait.
func ReleaseAbandoned(disabled bool, lastCall time.Time, parkedWaits int, now time.Time, releaseAfter time.Duration) bool {
	if disabled {
		return true
	}
	return parkedWaits == 0 && !lastCall.IsZero() && now.Sub(lastCall) >= releaseAfter
}
