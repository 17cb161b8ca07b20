package hub

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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
// segment, a backslash, character classes ([...]), "**" inside a segment
// and what no single-line field may hold (checkLine: control characters,
// direction overrides, invalid UTF-8).
//
// Patterns are bounded so that deciding whether two of them overlap costs
// little whatever they hold (reservation_match.go): at most 4 stars in a
// segment, 255 bytes in a segment (a file name's longest), 32 segments and
// 512 bytes in a pattern, 100 patterns in a call (reserving, releasing and
// listing alike). An exclusive reservation that covers the whole project
// ("**", "*", "**/*", or a set such as ["?", "??*"]: coversProject), alone
// or with the agent's other exclusive reservations, needs the admin; an
// agent may hold it shared.

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
	maxReasonBytes        = 1024
	maxReservationsHeld   = 1000 // active reservations one agent may hold
)

// Pattern limits: what bounds the cost of matching (reservation_match.go).
const (
	maxPatternBytes    = 512
	maxSegmentBytes    = 255 // a file name's longest on common file systems
	maxPatternSegments = 32
	maxStarsPerSegment = 4
	maxPatternsPerCall = 100 // reserving, releasing and listing alike
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
// whole project, "**"). Errors: EINVALID saying what is expected or which
// limit the pattern passes, with its value.
func NormalizePattern(p string) (string, error) {
	const expected = "expected a path or glob relative to the project root, such as src/, internal/hub/*.go or **/*.md"
	if strings.TrimSpace(p) == "" {
		return "", Errorf(EINVALID, "path is empty: %s", expected)
	}
	if err := checkLine("path", p); err != nil {
		return "", err
	}
	switch {
	case strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':'):
		return "", Errorf(EINVALID, "path %s is absolute: %s", shortPattern(p), expected)
	case strings.ContainsAny(p, "\\[]"):
		return "", Errorf(EINVALID, "path %s holds a backslash or a bracket: use '/' between segments; only *, ? and ** are wildcards", shortPattern(p))
	}
	var segs []string
	for i, s := range strings.Split(p, "/") {
		switch {
		case s == "" || s == ".":
			continue
		case s == "..":
			return "", Errorf(EINVALID, "path %s holds '..': reservations stay inside the project; %s", shortPattern(p), expected)
		case s != "**" && strings.Contains(s, "**"):
			return "", Errorf(EINVALID, "path %s holds ** inside a segment: ** stands alone between slashes (src/**/x.go); use * within a segment", shortPattern(p))
		}
		if n := strings.Count(s, "*"); n > maxStarsPerSegment && s != "**" {
			return "", Errorf(EINVALID, "path %s: segment %d holds %d stars; the limit is %d per segment", shortPattern(p), i+1, n, maxStarsPerSegment)
		}
		if len(s) > maxSegmentBytes {
			return "", Errorf(EINVALID, "path %s: segment %d is %d bytes long; the limit is %d bytes (a file name's longest)", shortPattern(p), i+1, len(s), maxSegmentBytes)
		}
		if s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return "**", nil
	}
	if len(segs) > maxPatternSegments {
		return "", Errorf(EINVALID, "path %s has %d segments; the limit is %d: reserve a directory above it (src/ covers everything below)", shortPattern(p), len(segs), maxPatternSegments)
	}
	n := strings.Join(segs, "/")
	if len(n) > maxPatternBytes {
		return "", Errorf(EINVALID, "path %s is %d bytes long; the limit is %d bytes: reserve a directory above it (src/ covers everything below)", shortPattern(p), len(n), maxPatternBytes)
	}
	return n, nil
}

// normalizePatterns normalises the patterns of one call, at most
// maxPatternsPerCall of them, dropping repeats. Errors: EINVALID.
func normalizePatterns(ps []string) ([]string, error) {
	if len(ps) > maxPatternsPerCall {
		return nil, Errorf(EINVALID, "%d paths in one call; the limit is %d: name a directory or a glob instead", len(ps), maxPatternsPerCall)
	}
	seen := make(map[string]bool, len(ps))
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		n, err := NormalizePattern(p)
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// shortPattern quotes p for an error, its first 60 bytes when longer.
func shortPattern(p string) string {
	const max = 60
	if len(p) <= max {
		return fmt.Sprintf("%q", p)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", p[:cut], len(p))
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
// the active reservations held, where overlaps(h) gives the indices of the
// request's patterns that the reservation h overlaps (matching is the
// expensive part: the service decides it before its write transaction). A
// pattern the agent already holds is renewed with the new mode, lease and
// reason; the agent's own reservations never conflict with it. Another
// agent's overlapping reservation is a conflict; it refuses the whole
// request (EPRECONDITION naming each holder, pattern and expiry, nothing
// written) when both are exclusive. A shared request over an exclusive
// one, and an exclusive request over shared ones, are granted with the
// conflicts named.
func DecideReservation(agentID int64, agentName string, req ReservationRequest, held []*Reservation, overlaps func(*Reservation) []int, now time.Time) (ReservationDecision, error) {
	var d ReservationDecision
	mine := map[string]*Reservation{}
	byPattern := make([][]*Reservation, len(req.Patterns))
	for _, h := range held {
		if h.AgentID == agentID {
			mine[h.Pattern] = h
			continue
		}
		for _, i := range overlaps(h) {
			byPattern[i] = append(byPattern[i], h)
		}
	}
	var refusals []string
	for i, p := range req.Patterns {
		for _, h := range byPattern[i] {
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
	if len(mine)+len(d.Insert) > maxReservationsHeld {
		return ReservationDecision{}, Errorf(EEXHAUSTED, "an agent may hold %d reservations at once; you hold %d: release some or reserve a directory instead of its files", maxReservationsHeld, len(mine))
	}
	return d, nil
}

// wholeProjectExclusive refuses an exclusive request of an agent whose
// patterns, alone or together with the exclusive reservations the agent
// holds (held, those of agentID among them), cover the whole project
// (coversProject): that takes the admin. A request over a whole project the
// agent already holds (the admin reserved it for it) adds nothing and
// passes. Errors: EPERMISSION.
func wholeProjectExclusive(agentID int64, req ReservationRequest, held []*Reservation) error {
	if req.Mode != ReservationExclusive {
		return nil
	}
	const how = "which takes the admin (hubctl reservations reserve --agent NAME PATHS): reserve it shared, or name the directories you work in (src/, docs/*.md)"
	if coversProject(req.Patterns...) {
		return Errorf(EPERMISSION, "an exclusive reservation of %s covers the whole project, %s", shortPatterns(req.Patterns), how)
	}
	var mine []string
	for _, h := range held {
		if h.AgentID == agentID && h.Exclusive() {
			mine = append(mine, h.Pattern)
		}
	}
	if len(mine) == 0 || coversProject(mine...) || !coversProject(append(mine, req.Patterns...)...) {
		return nil
	}
	return Errorf(EPERMISSION, "an exclusive reservation of %s, with the exclusive reservations you hold (%s), covers the whole project, %s", shortPatterns(req.Patterns), shortPatterns(mine), how)
}

// shortPatterns quotes the first few of ps for an error.
func shortPatterns(ps []string) string {
	const max = 5
	parts := make([]string, 0, max+1)
	for i, p := range ps {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(ps)-max))
			break
		}
		parts = append(parts, shortPattern(p))
	}
	return strings.Join(parts, ", ")
}

// validateReservationRequest normalises req's patterns in place and checks
// its other fields. Errors: EINVALID.
func validateReservationRequest(req *ReservationRequest) error {
	if len(req.Patterns) == 0 {
		return Errorf(EINVALID, "paths are required: give one or more paths or globs relative to the project root, such as src/ or **/*.md")
	}
	var err error
	if req.Patterns, err = normalizePatterns(req.Patterns); err != nil {
		return err
	}
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

// ReleaseAbandoned reports whether an agent's reservations should be
// released: it is disabled, or it made no call for releaseAfter and has no
// parked wait.
func ReleaseAbandoned(disabled bool, lastCall time.Time, parkedWaits int, now time.Time, releaseAfter time.Duration) bool {
	if disabled {
		return true
	}
	return parkedWaits == 0 && !lastCall.IsZero() && now.Sub(lastCall) >= releaseAfter
}
