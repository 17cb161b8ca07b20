package hub

import (
	"context"
	"strings"
	"unicode/utf8"
)

// Matching reservation patterns, with a cost that the pattern limits bound
// (reservation.go) and that never grows exponentially:
//
//   - Within one segment, two globs overlap when some name matches both.
//     Without a star on either side that is a character-by-character
//     comparison; with stars on both sides only the text before the first
//     star and after the last one can disagree (whatever one needs, the
//     other's stars can take); with stars on one side only, its pieces are
//     placed in the other's characters, each as early as it fits (an
//     earlier place never hurts the pieces after it). At most
//     len(a)·len(b) character comparisons, no allocation.
//   - Across segments, "**" takes zero or more whole segments: a memoised
//     walk over (i, j) segment positions visits each pair once, so at most
//     segments(a)·segments(b) segment comparisons, and their characters
//     add up to at most len(a)·len(b) comparisons in all.
//   - A path is matched the same way (MatchPattern): (pattern segment,
//     path segment) pairs, each visited once.
//
// Overlaps between a request and the reservations held are decided outside
// the write transaction (overlapTable), under the caller's context.

// globSeg is one segment of a compiled pattern.
type globSeg struct {
	any   bool    // "**": zero or more whole segments
	chars []int32 // the segment's characters; '*' and '?' are wildcards
	stars int     // how many of chars are '*'
}

// glob is a pattern compiled for matching, segment by segment.
type glob []globSeg

// invalidByte stands for a byte that is not part of valid UTF-8: it
// equals only itself, never a character or another byte.
func invalidByte(b byte) int32 { return -1 - int32(b) }

// appendChars appends the characters of s to out, a byte of invalid UTF-8
// as one character of its own (as path.Match reads it).
func appendChars(out []int32, s string) []int32 {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, invalidByte(s[i]))
		} else {
			out = append(out, r)
		}
		i += n
	}
	return out
}

// compileGlob compiles a pattern (normally a normalised one; a pattern
// read from elsewhere is matched as written, segment by segment).
func compileGlob(p string) glob {
	segs := strings.Split(p, "/")
	g := make(glob, len(segs))
	all := make([]int32, 0, len(p))
	for i, s := range segs {
		k := len(all)
		all = appendChars(all, s)
		g[i].chars = all[k:len(all):len(all)]
		if s == "**" {
			g[i].any = true
			continue
		}
		g[i].stars = strings.Count(s, "*")
	}
	return g
}

// compatible reports whether pattern character p and character t (itself a
// wildcard '?' when tWild) can stand for the same character.
func compatible(t, p int32, tWild bool) bool {
	return p == '?' || t == p || (tWild && t == '?')
}

// sameRun reports whether t and p, of the same length, can spell the same
// characters.
func sameRun(t, p []int32, tWild bool) bool {
	for i := range p {
		if !compatible(t[i], p[i], tWild) {
			return false
		}
	}
	return true
}

// fits reports whether segment glob g, which has at least one star, matches
// some spelling of text (characters, with '?' a wildcard when tWild): its
// first piece at the start, its last at the end, the pieces between at the
// earliest place each fits, in order.
func fits(g []int32, text []int32, tWild bool) bool {
	first := indexStar(g)
	last := lastStar(g)
	head, tail := g[:first], g[last+1:]
	if len(head)+len(tail) > len(text) || !sameRun(text[:len(head)], head, tWild) ||
		!sameRun(text[len(text)-len(tail):], tail, tWild) {
		return false
	}
	rest := text[len(head) : len(text)-len(tail)]
	for mid := g[first+1 : last+1]; len(mid) > 0; {
		end := indexStar(mid)
		piece := mid[:end]
		mid = mid[end+1:]
		at := -1
		for k := 0; k+len(piece) <= len(rest); k++ {
			if sameRun(rest[k:k+len(piece)], piece, tWild) {
				at = k
				break
			}
		}
		if at < 0 {
			return false
		}
		rest = rest[at+len(piece):]
	}
	return true
}

// indexStar returns the index of the first '*' in g, or len(g).
func indexStar(g []int32) int {
	for i, c := range g {
		if c == '*' {
			return i
		}
	}
	return len(g)
}

// lastStar returns the index of the last '*' in g, or -1.
func lastStar(g []int32) int {
	for i := len(g) - 1; i >= 0; i-- {
		if g[i] == '*' {
			return i
		}
	}
	return -1
}

// segmentsOverlap reports whether some name matches both segment globs.
func segmentsOverlap(a, b *globSeg) bool {
	switch {
	case a.stars == 0 && b.stars == 0:
		return len(a.chars) == len(b.chars) && sameRun(a.chars, b.chars, true)
	case a.stars == 0:
		return fits(b.chars, a.chars, true)
	case b.stars == 0:
		return fits(a.chars, b.chars, true)
	}
	// Stars on both sides: the heads and the tails must agree as far as
	// both reach; a star of one takes whatever the other needs there.
	ha, hb := a.chars[:indexStar(a.chars)], b.chars[:indexStar(b.chars)]
	n := min(len(ha), len(hb))
	ta, tb := a.chars[lastStar(a.chars)+1:], b.chars[lastStar(b.chars)+1:]
	m := min(len(ta), len(tb))
	return sameRun(ha[:n], hb[:n], true) && sameRun(ta[len(ta)-m:], tb[len(tb)-m:], true)
}

// segmentMatches reports whether segment glob g matches the name.
func segmentMatches(g *globSeg, name []int32) bool {
	if g.any {
		return true
	}
	if g.stars == 0 {
		return len(g.chars) == len(name) && sameRun(name, g.chars, false)
	}
	return fits(g.chars, name, false)
}

// memo is a table of decisions over (i, j) positions: 0 not decided yet,
// 1 yes, 2 no. It is reused from one pair to the next.
type memo struct {
	cells []uint8
	width int
}

// reset sizes the table for positions 0..n × 0..m, all undecided.
func (t *memo) reset(n, m int) {
	t.width = m + 1
	size := (n + 1) * t.width
	if cap(t.cells) < size {
		t.cells = make([]uint8, size)
	}
	t.cells = t.cells[:size]
	clear(t.cells)
}

// get returns the decision at (i, j) and whether there is one.
func (t *memo) get(i, j int) (v, ok bool) {
	c := t.cells[i*t.width+j]
	return c == 1, c != 0
}

// set records the decision v at (i, j) and returns it.
func (t *memo) set(i, j int, v bool) bool {
	c := uint8(2)
	if v {
		c = 1
	}
	t.cells[i*t.width+j] = c
	return v
}

// overlapper decides overlaps of compiled patterns, reusing its table.
type overlapper struct {
	a, b glob
	m    memo
}

// overlap reports whether some path is covered by both a and b.
func (o *overlapper) overlap(a, b glob) bool {
	o.a, o.b = a, b
	o.m.reset(len(a), len(b))
	return o.at(0, 0)
}

// at decides whether a[i:] and b[j:] cover a path in common. A pattern
// that ran out covers everything below what it matched: the other can
// always be extended under it.
func (o *overlapper) at(i, j int) bool {
	if i == len(o.a) || j == len(o.b) {
		return true
	}
	if v, ok := o.m.get(i, j); ok {
		return v
	}
	a, b := &o.a[i], &o.b[j]
	var v bool
	switch {
	case a.any: // takes nothing, or b's next segment
		v = o.at(i+1, j) || o.at(i, j+1)
	case b.any:
		v = o.at(i, j+1) || o.at(i+1, j)
	default:
		v = segmentsOverlap(a, b) && o.at(i+1, j+1)
	}
	return o.m.set(i, j, v)
}

// MatchPattern reports whether the pattern covers path (a file or
// directory path relative to the project root): the pattern matches path or
// one of its parent directories. A pattern is matched as written, so one
// that NormalizePattern would refuse costs no more than one it accepts.
func MatchPattern(pattern, path string) bool {
	g := compileGlob(pattern)
	segs := strings.Split(strings.Trim(path, "/"), "/")
	names := make([][]int32, len(segs))
	buf := make([]int32, 0, len(path))
	for i, s := range segs {
		k := len(buf)
		buf = appendChars(buf, s)
		names[i] = buf[k:len(buf):len(buf)]
	}
	var m memo
	m.reset(len(g), len(names))
	var at func(i, j int) bool
	at = func(i, j int) bool {
		if i == len(g) {
			return j > 0 // matched the path or a parent of it
		}
		if v, ok := m.get(i, j); ok {
			return v
		}
		var v bool
		switch {
		case g[i].any:
			v = at(i+1, j) || (j < len(names) && at(i, j+1))
		case j < len(names):
			v = segmentMatches(&g[i], names[j]) && at(i+1, j+1)
		}
		return m.set(i, j, v)
	}
	return at(0, 0)
}

// coversProject reports whether the normalised patterns together cover
// every path of a project. A path is covered when a pattern matches it or
// one of its parents, so the set covers the project exactly when it
// matches every top-level name; and only a pattern whose segments but one
// are "**" (or all of them: "**" covers everything) matches a name alone.
// Such a segment made of '*' and '?' only matches by length: n '?' and a
// star, every name of n characters or more; n '?' and no star, names of
// exactly n. A segment that holds any other character misses a name of
// the same length spelled in a character no pattern holds, and so covers
// no length whole. The set thus covers the project exactly when its
// wildcard-only segments cover every length from 1 up: "*", "?*",
// ["?", "??*"], ["?", "??", "???*"].
func coversProject(patterns ...string) bool {
	from := -1        // the shortest length a starred segment covers, with all beyond
	exact := []bool{} // exact[n]: names of n characters are covered
	for _, p := range patterns {
		seg, others := otherSegment(compileGlob(p))
		switch {
		case others == 0:
			return true // "**"
		case others > 1:
			continue // matches no top-level name
		}
		n, star, wild := 0, false, true
		for _, c := range seg {
			switch c {
			case '*':
				star = true
			case '?':
				n++
			default:
				wild = false
			}
		}
		switch {
		case !wild:
		case star:
			if from < 0 || n < from {
				from = n
			}
		default:
			for len(exact) <= n {
				exact = append(exact, false)
			}
			exact[n] = true
		}
	}
	if from < 0 {
		return false
	}
	for n := 1; n < from; n++ {
		if n >= len(exact) || !exact[n] {
			return false
		}
	}
	return true
}

// otherSegment returns how many segments of g are not "**", and the
// characters of the last of them.
func otherSegment(g glob) (chars []int32, n int) {
	for _, s := range g {
		if !s.any {
			chars, n = s.chars, n+1
		}
	}
	return chars, n
}

// overlapTable records which patterns of one request each reservation held
// overlaps, by reservation ID together with the reservation's pattern (a
// pattern never changes under its ID, and the decision depends only on the
// two patterns). It is filled outside the write transaction; inside it,
// only the reservations made since need matching.
type overlapTable struct {
	req  []glob
	rows map[int64]overlapRow
	o    overlapper
}

// overlapRow is one held reservation's entry in an overlapTable.
type overlapRow struct {
	pattern string
	hits    []int // indices into the request's patterns
}

// newOverlapTable returns an empty table for the normalised patterns of a
// request.
func newOverlapTable(patterns []string) *overlapTable {
	t := &overlapTable{req: make([]glob, len(patterns)), rows: map[int64]overlapRow{}}
	for i, p := range patterns {
		t.req[i] = compileGlob(p)
	}
	return t
}

// known reports whether h's entry is in the table.
func (t *overlapTable) known(h *Reservation) bool {
	row, ok := t.rows[h.ID]
	return ok && row.pattern == h.Pattern
}

// hits returns the indices of the request's patterns that h overlaps,
// matching them now if h is not in the table yet.
func (t *overlapTable) hits(h *Reservation) []int {
	if row, ok := t.rows[h.ID]; ok && row.pattern == h.Pattern {
		return row.hits
	}
	g := compileGlob(h.Pattern)
	var hits []int
	for i, p := range t.req {
		if t.o.overlap(p, g) {
			hits = append(hits, i)
		}
	}
	t.rows[h.ID] = overlapRow{pattern: h.Pattern, hits: hits}
	return hits
}

// fill enters the reservations of held that agents other than self hold,
// stopping with ctx's error when the caller gives up.
func (t *overlapTable) fill(ctx context.Context, held []*Reservation, self int64) error {
	for _, h := range held {
		if h.AgentID == self || t.known(h) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		t.hits(h)
	}
	return nil
}

// overlapping returns the IDs of the reservations of rs that the table
// has overlapping some pattern of the request.
func (t *overlapTable) overlapping(rs []*Reservation) []int64 {
	var ids []int64
	for _, r := range rs {
		if row, ok := t.rows[r.ID]; ok && row.pattern == r.Pattern && len(row.hits) > 0 {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// unknownPairs returns how many (request pattern, held pattern) pairs
// entering held into the table would still take.
func (t *overlapTable) unknownPairs(held []*Reservation, self int64) int {
	n := 0
	for _, h := range held {
		if h.AgentID != self && !t.known(h) {
			n++
		}
	}
	return n * len(t.req)
}

// filterReservations returns the reservations of rs that overlap at least
// one of the normalised patterns (all of rs when there are none), stopping
// with ctx's error when the caller gives up.
func filterReservations(ctx context.Context, rs []*Reservation, patterns []string) ([]*Reservation, error) {
	if len(patterns) == 0 {
		return rs, nil
	}
	gs := make([]glob, len(patterns))
	for i, p := range patterns {
		gs[i] = compileGlob(p)
	}
	var o overlapper
	var out []*Reservation
	for _, r := range rs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g := compileGlob(r.Pattern)
		for _, p := range gs {
			if o.overlap(g, p) {
				out = append(out, r)
				break
			}
		}
	}
	return out, nil
}
