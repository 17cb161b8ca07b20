package hub

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"
)

// Reservations is the service of path reservations.
type Reservations struct {
	*core
	store      txs[reservationsTx] // the store methods it uses
	matchSlots chan struct{}       // pattern matching under way (matching)
}

// reservationsTx is what the reservations service reads and writes in one transaction:
// the store methods it uses, by their group.
type reservationsTx interface {
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	// EventTx
	InsertEvent(e *Event) error
	// ReservationTx
	ActiveReservations(now time.Time, agentID int64) ([]*Reservation, error)
	DeleteExpiredReservations(now time.Time, limit int) (int, error)
	DeleteReservations(ids []int64) (int, error)
	ExpiredReservations(now time.Time, limit int) ([]int64, error)
	InsertReservations(rs []*Reservation) error
	MaxReservationID() (int64, error)
	RecheckReservations(now time.Time, agentID int64, ids []int64, afterID int64) ([]*Reservation, error)
	ReservationByID(id int64) (*Reservation, error)
	ReservationHolders(now time.Time) ([]int64, error)
	UpdateReservation(r *Reservation) error
}

// NewReservations returns the reservations' service.
func NewReservations(c *Core) *Reservations {
	return &Reservations{core: c.core, store: txsOf[reservationsTx](c.store), matchSlots: make(chan struct{}, matchingSlots())}
}

// ReservationTx stores path reservations.
type ReservationTx interface {
	// ActiveReservations returns the reservations expiring after now, of
	// agentID (0: of every agent), by pattern then ID, with the names and
	// projects of their agents.
	ActiveReservations(now time.Time, agentID int64) ([]*Reservation, error)
	// RecheckReservations returns the reservations expiring after now that
	// a decision taken on an earlier read must see again: agentID's own,
	// those with the given IDs, and every one with an ID above afterID
	// (made since the read: IDs grow in commit order, and an ID never comes
	// back, see InsertReservations), with their agents' names and projects,
	// by pattern then ID.
	RecheckReservations(now time.Time, agentID int64, ids []int64, afterID int64) ([]*Reservation, error)
	// MaxReservationID returns the greatest reservation ID there is,
	// expired or not (0 when there is none).
	MaxReservationID() (int64, error)
	// ReservationByID returns one reservation, expired or not. Errors: ENOTFOUND.
	ReservationByID(id int64) (*Reservation, error)
	// InsertReservations inserts rs and sets their IDs, new ones: an expired
	// reservation of the same agent and pattern, not yet deleted by the
	// orchestrator, is deleted first.
	InsertReservations(rs []*Reservation) error
	// UpdateReservation stores r's mode, reason and expiry. Errors: ENOTFOUND.
	UpdateReservation(r *Reservation) error
	// DeleteReservations deletes the reservations with the given IDs (those
	// that exist) and returns how many it deleted.
	DeleteReservations(ids []int64) (int, error)
	// DeleteExpiredReservations deletes up to limit reservations that
	// expired at or before now, the oldest expiry first, and returns how
	// many it deleted.
	DeleteExpiredReservations(now time.Time, limit int) (int, error)
	// ExpiredReservations returns the IDs of up to limit reservations
	// that expired at or before now, the oldest expiry first (an index
	// read: the orchestrator's look for due work before it writes).
	ExpiredReservations(now time.Time, limit int) ([]int64, error)
	// ReservationHolders returns the IDs of the agents holding a
	// reservation that expires after now.
	ReservationHolders(now time.Time) ([]int64, error)
}

// Event kinds recorded by reservations.
const (
	// EventReservationReleased: reservations released by someone other
	// than their holder (an admin, or the orchestrator for a disabled or
	// long-silent agent).
	EventReservationReleased EventKind = "reservation_released"
)

// ReservePaths reserves req's patterns for caller, all or none (see
// DecideReservation), and returns the caller's reservations it made or
// renewed and the other agents' overlapping ones. An exclusive reservation
// covering the whole project is the admin's (ReservePathsFor). Errors:
// EINVALID, EPERMISSION (the whole project), EPRECONDITION (an exclusive
// conflict, naming the holder), EEXHAUSTED, ctx's error.
func (s *Reservations) ReservePaths(ctx context.Context, caller *Agent, req ReservationRequest) ([]*Reservation, []Conflict, error) {
	if err := validateReservationRequest(&req); err != nil {
		return nil, nil, err
	}
	return s.reserve(ctx, caller, req, false)
}

// ReservePathsFor reserves req's patterns for the named agent, as the
// agent's own ReservePaths would, except that it may reserve the whole
// project exclusively: the admin's call. Errors: those of ReservePaths,
// ENOTFOUND (agent), EPRECONDITION (agent disabled).
func (s *Reservations) ReservePathsFor(ctx context.Context, agent string, req ReservationRequest) ([]*Reservation, []Conflict, error) {
	if err := ValidateAgentName(agent); err != nil {
		return nil, nil, err
	}
	if err := validateReservationRequest(&req); err != nil {
		return nil, nil, err
	}
	var a *Agent
	err := view(ctx, s.store, func(tx reservationsTx) error {
		var err error
		if a, err = tx.AgentByName(agent); ErrorCode(err) == ENOTFOUND {
			return agentNotFound(agent)
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if a.Disabled() {
		return nil, nil, Errorf(EPRECONDITION, "agent %q is disabled, and a disabled agent's reservations are released: enable it first (hubctl agent enable %s)", a.Name, a.Name)
	}
	return s.reserve(ctx, a, req, true)
}

// matchingSlots is how many calls may match reservation patterns at once:
// half the CPUs the hub may use, at least one, so that a storm of
// reservations never takes the CPU that the writer and every other call
// need.
func matchingSlots() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// matching runs fn, which matches patterns, in one of the matching slots,
// waiting its turn for as long as ctx allows.
func (s *Reservations) matching(ctx context.Context, fn func() error) error {
	select {
	case s.matchSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.matchSlots }()
	return fn()
}

// Matching inside the write transaction: how many (requested pattern, held
// pattern) pairs a reservation may still match there, when others reserved
// since its read, before it reads and matches again outside; and how many
// times it does so before it matches whatever is left inside.
const (
	writerMatchPairs  = 32
	reserveReadRounds = 3
)

// errReservationsMoved sends a reservation back to read and match again:
// too many reservations were made since its read.
var errReservationsMoved = errors.New("reservations changed since they were read")

// reserve decides and writes a validated request of agent a. The matching
// runs outside the write transaction, on what a read finds, under ctx;
// inside, the decision reads again only the caller's reservations, those
// the read found overlapping (their mode or expiry may have changed) and
// those made since the read, and matches only the latter (an overlap
// depends only on the two patterns, and a reservation's pattern never
// changes under its ID). So of many agents racing for the same paths
// exactly one gets an exclusive reservation, and the writer never matches
// what the read matched.
func (s *Reservations) reserve(ctx context.Context, a *Agent, req ReservationRequest, admin bool) ([]*Reservation, []Conflict, error) {
	project := ProjectOr(a.Project)
	if !admin {
		if err := wholeProjectExclusive(a.ID, req, nil); err != nil {
			return nil, nil, err
		}
	}
	table := newOverlapTable(req.Patterns)
	for round := 1; ; round++ {
		var rs []*Reservation
		var mark int64
		err := view(ctx, s.store, func(tx reservationsTx) (err error) {
			// The mark first: a reservation committed between the two
			// statements (PostgreSQL reads each at its own snapshot) is
			// above it, so it is read again inside the write.
			if mark, err = tx.MaxReservationID(); err != nil {
				return err
			}
			rs, err = tx.ActiveReservations(s.clock.Now(), 0)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		rs = InProject(rs, project, ReservationProject) // projects reserve apart
		if err := s.matching(ctx, func() error { return table.fill(ctx, rs, a.ID) }); err != nil {
			return nil, nil, err
		}
		candidates := table.overlapping(rs)
		var d ReservationDecision
		err = update(ctx, s.store, func(tx reservationsTx) error {
			now := s.clock.Now()
			rs, err := tx.RecheckReservations(now, a.ID, candidates, mark)
			if err != nil {
				return err
			}
			rs = InProject(rs, project, ReservationProject)
			if round < reserveReadRounds && table.unknownPairs(rs, a.ID) > writerMatchPairs {
				return errReservationsMoved
			}
			if !admin {
				if err := wholeProjectExclusive(a.ID, req, rs); err != nil {
					return err
				}
			}
			if d, err = DecideReservation(a.ID, a.Name, req, rs, table.hits, now); err != nil {
				return err
			}
			for _, r := range slices.Concat(d.Update, d.Insert) {
				r.Project = a.Project
			}
			for _, r := range d.Update {
				if err := tx.UpdateReservation(r); err != nil {
					return err
				}
			}
			return tx.InsertReservations(d.Insert)
		})
		switch {
		case errors.Is(err, errReservationsMoved):
			continue
		case err != nil:
			return nil, d.Conflicts, err
		}
		return append(d.Update, d.Insert...), d.Conflicts, nil
	}
}

// RenewReservations moves the expiry of the caller's reservations with the
// given IDs (all of the caller's when ids is empty) to now plus ttl (the
// default lease when zero), unless they already run longer (a renewal never
// shortens a lease), and returns them. Errors: EINVALID (ttl),
// ENOTFOUND (an ID that is not an active reservation of the caller;
// nothing is renewed).
func (s *Reservations) RenewReservations(ctx context.Context, caller *Agent, ids []int64, ttl time.Duration) ([]*Reservation, error) {
	ttl, err := ReservationTTL(ttl)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var out []*Reservation
	err = update(ctx, s.store, func(tx reservationsTx) error {
		mine, err := tx.ActiveReservations(now, caller.ID)
		if err != nil {
			return err
		}
		out, err = pickReservations(mine, ids)
		if err != nil {
			return err
		}
		for _, r := range out {
			if !now.Add(ttl).After(r.ExpiresAt) {
				continue // a renewal never shortens a lease
			}
			r.ExpiresAt = now.Add(ttl)
			if err := tx.UpdateReservation(r); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// pickReservations returns the reservations of mine with the given IDs,
// all of mine when ids is empty. Errors: ENOTFOUND.
func pickReservations(mine []*Reservation, ids []int64) ([]*Reservation, error) {
	if len(ids) == 0 {
		return mine, nil
	}
	byID := make(map[int64]*Reservation, len(mine))
	for _, r := range mine {
		byID[r.ID] = r
	}
	out := make([]*Reservation, 0, len(ids))
	for _, id := range ids {
		r := byID[id]
		if r == nil {
			return nil, Errorf(ENOTFOUND, "reservation %d is not an active reservation of yours (expired, released or another agent's): list_reservations shows yours", id)
		}
		out = append(out, r)
	}
	return out, nil
}

// ReleasePaths releases the caller's reservations with the given IDs or
// patterns (all of the caller's when both are empty) and returns those it
// released. Releasing what is no longer held is not an error: the result
// says what was released. Errors: EINVALID (a pattern).
func (s *Reservations) ReleasePaths(ctx context.Context, caller *Agent, ids []int64, patterns []string) ([]*Reservation, error) {
	patterns, err := normalizePatterns(patterns)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, p := range patterns {
		want[p] = true
	}
	wantID := map[int64]bool{}
	for _, id := range ids {
		wantID[id] = true
	}
	now := s.clock.Now()
	var out []*Reservation
	err = update(ctx, s.store, func(tx reservationsTx) error {
		out = out[:0]
		mine, err := tx.ActiveReservations(now, caller.ID)
		if err != nil {
			return err
		}
		var del []int64
		for _, r := range mine {
			if (len(want) == 0 && len(wantID) == 0) || want[r.Pattern] || wantID[r.ID] {
				out, del = append(out, r), append(del, r.ID)
			}
		}
		_, err = tx.DeleteReservations(del)
		return err
	})
	return out, err
}

// ReservationFilter selects active reservations: of one agent (by name) and
// overlapping one of Paths. Zero fields match all.
type ReservationFilter struct {
	Project string // only this project's reservations, if set (an agent's own, always)
	Agent   string
	Paths   []string
}

// ListReservations returns the active reservations matching f, by pattern.
// Every agent may list every reservation of its project: they exist to be
// seen. Errors: EINVALID, ENOTFOUND (agent, also one of another project
// than f.Project).
func (s *Reservations) ListReservations(ctx context.Context, f ReservationFilter) ([]*Reservation, error) {
	paths, err := normalizePatterns(f.Paths)
	if err != nil {
		return nil, err
	}
	if f.Agent != "" {
		if err := ValidateAgentName(f.Agent); err != nil {
			return nil, err
		}
	}
	now := s.clock.Now()
	var rs []*Reservation
	err = view(ctx, s.store, func(tx reservationsTx) error {
		var id int64
		if f.Agent != "" {
			a, err := tx.AgentByName(f.Agent)
			if ErrorCode(err) == ENOTFOUND || (err == nil && f.Project != "" && ProjectOr(a.Project) != f.Project) {
				return agentNotFound(f.Agent)
			} else if err != nil {
				return err
			}
			id = a.ID
		}
		var err error
		rs, err = tx.ActiveReservations(now, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	rs = InProject(rs, f.Project, ReservationProject)
	if len(paths) == 0 {
		return rs, nil
	}
	var out []*Reservation
	err = s.matching(ctx, func() (err error) {
		out, err = filterReservations(ctx, rs, paths)
		return err
	})
	return out, err
}

// ForceReleaseReservation releases reservation id whoever holds it, and
// records a reservation_released event on the holder naming the pattern
// and reason. Errors: ENOTFOUND (no such active reservation), EINVALID.
func (s *Reservations) ForceReleaseReservation(ctx context.Context, id int64, reason string) (*Reservation, error) {
	if err := validateAgentText("reason", reason, maxReasonBytes); err != nil {
		return nil, err
	}
	if err := checkLine("reason", reason); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var r *Reservation
	err := update(ctx, s.store, func(tx reservationsTx) error {
		var err error
		if r, err = tx.ReservationByID(id); err != nil {
			return err
		}
		if !r.ExpiresAt.After(now) {
			return Errorf(ENOTFOUND, "reservation %d expired at %s: there is nothing to release", id, r.ExpiresAt.UTC().Format(time.RFC3339))
		}
		if _, err := tx.DeleteReservations([]int64{id}); err != nil {
			return err
		}
		detail := fmt.Sprintf("%s (%s) force-released by an admin", r.Pattern, r.Mode)
		if reason != "" {
			detail += ": " + reason
		}
		return recordEvent(tx, r.AgentID, EventReservationReleased, detail, now)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ExpireReservations is the orchestrator's reservation job at now: it
// deletes up to limit expired reservations, and releases every reservation
// of an agent that is disabled or made no call for releaseAfter (recording
// a reservation_released event for each such agent). It returns how many
// reservations went. It looks for due work in a read first, and takes a
// turn of the writer only when it found some.
func (s *Reservations) ExpireReservations(ctx context.Context, now time.Time, releaseAfter time.Duration, limit int) (expired, released int, err error) {
	var due bool
	err = view(ctx, s.store, func(tx reservationsTx) error {
		ids, err := tx.ExpiredReservations(now, 1)
		if err != nil || len(ids) > 0 {
			due = len(ids) > 0
			return err
		}
		abandoned, err := s.abandonedHolders(tx, now, releaseAfter)
		due = len(abandoned) > 0
		return err
	})
	if err != nil || !due {
		if err != nil {
			err = fmt.Errorf("expire reservations: %w", err)
		}
		return 0, 0, err
	}
	err = update(ctx, s.store, func(tx reservationsTx) error {
		expired, released = 0, 0
		var err error
		if expired, err = tx.DeleteExpiredReservations(now, limit); err != nil {
			return err
		}
		abandoned, err := s.abandonedHolders(tx, now, releaseAfter)
		if err != nil {
			return err
		}
		for _, h := range abandoned {
			a, p := h.agent, h.presence
			rs, err := tx.ActiveReservations(now, a.ID)
			if err != nil {
				return err
			}
			ids := make([]int64, len(rs))
			for i, r := range rs {
				ids[i] = r.ID
			}
			n, err := tx.DeleteReservations(ids)
			if err != nil {
				return err
			}
			released += n
			why := "disabled"
			if !a.Disabled() {
				why = fmt.Sprintf("no call since %s (release after %s)", p.LastSeenAt.UTC().Format(time.RFC3339), releaseAfter)
			}
			if err := recordEvent(tx, a.ID, EventReservationReleased, fmt.Sprintf("%d reservations released: agent %s", n, why), now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("expire reservations: %w", err)
	}
	return expired, released, nil
}

// abandonedHolder is an agent whose reservations are to be released, and
// its presence at the time of the decision.
type abandonedHolder struct {
	agent    *Agent
	presence AgentPresence
}

// abandonedHolders returns the agents holding a reservation that expires
// after now whose reservations are to be released: disabled, or silent
// for releaseAfter (ReleaseAbandoned).
func (s *Reservations) abandonedHolders(tx reservationsTx, now time.Time, releaseAfter time.Duration) ([]abandonedHolder, error) {
	holders, err := tx.ReservationHolders(now)
	if err != nil {
		return nil, err
	}
	var out []abandonedHolder
	for _, id := range holders {
		a, err := tx.AgentByID(id)
		if err != nil {
			return nil, err
		}
		p := s.presenceAt(a, now)
		if ReleaseAbandoned(a.Disabled(), p.LastSeenAt, s.waiters.AgentCount(a.ID), now, releaseAfter) {
			out = append(out, abandonedHolder{a, p})
		}
	}
	return out, nil
}
