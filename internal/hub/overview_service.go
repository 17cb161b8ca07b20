package hub

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// AgentOverview is one agent with what a watcher needs at a glance.
type AgentOverview struct {
	Agent       *Agent
	Health      *AgentHealth
	Unread      int64 // delivered and not read
	Mentions    int64 // unread messages that mention the agent
	ParkedWaits int   // WaitForMessages calls parked now
}

// AgentOverviews returns every agent (disabled ones too when asked) with its
// health, unread counts and parked waits, read in one snapshot by one query
// (HealthTx.OverviewRows), whatever the number of agents.
func (s *Liveness) AgentOverviews(ctx context.Context, includeDisabled bool) ([]AgentOverview, error) {
	var rows []OverviewRow
	var now time.Time
	err := view(ctx, s.store, func(tx livenessTx) (err error) {
		now = s.clock.Now() // the time of the snapshot: pages order rows by it
		rows, err = tx.OverviewRows(true, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read overviews: %w", err)
	}
	if !includeDisabled {
		rows = slices.DeleteFunc(rows, func(r OverviewRow) bool { return r.Agent.Disabled() })
	}
	return s.overviews(rows, now), nil
}

// overviews makes the overviews of rows, evaluated at now.
func (s *Liveness) overviews(rows []OverviewRow, now time.Time) []AgentOverview {
	out := make([]AgentOverview, len(rows))
	for i, r := range rows {
		out[i] = AgentOverview{Agent: r.Agent, Health: s.healthOf(r.Agent, r.State, now), Unread: r.Unread, Mentions: r.Mentions,
			ParkedWaits: s.waiters.AgentCount(r.Agent.ID)}
	}
	return out
}

// OverviewWatch follows what changes the agents' overviews, for a live view
// that holds every row (the dashboard's stream): each Next returns the rows
// that may have changed since the last, read in one snapshot, so that the
// view's cost follows the changes, not the number of agents. A row may
// change through
//
//   - a call of the agent that writes (the API marks the caller on the
//     service's feed) or an admin call naming it (marked by name);
//   - a delivery to the agent (Waiters.Notify marks the recipients);
//   - time: its presence (active, idle, offline) and its parked waits,
//     whether a live path reaches it, and its interaction beat, found by a
//     scan of the presence tracker when the caller asks for one (about
//     once a second: O(agents) in memory);
//   - the orchestrator: health changes, expired deep work and nudges, found
//     in the event log after the last event seen, at the same scans.
//
// One watch per feed: Next takes the changes the feed gathered.
type OverviewWatch struct {
	s       *Liveness
	events  int64 // the newest event looked at
	shown   map[int64]shownPresence
	started bool
}

// OverviewChanges is what OverviewWatch.Next found.
type OverviewChanges struct {
	// Rows are the overviews that may have changed (every agent's, disabled
	// ones too, when All).
	Rows []AgentOverview
	// Gone are agents named by a change that no longer exist.
	Gone []string
	// All is set when Rows holds every agent: a row missing from it is gone.
	All bool
	// Beat is the beat at the read (since_last counts from it).
	Beat int64
}

// maxWatchedEvents is the most events one Next looks at; past it, it reads
// every row instead.
const maxWatchedEvents = 2000

// WatchOverviews returns the watch of the service's feed.
func (s *Liveness) WatchOverviews() *OverviewWatch {
	return &OverviewWatch{s: s, shown: map[int64]shownPresence{}}
}

// Next returns the rows that may have changed since the last call: those
// the feed gathered and, with scan, those whose presence moved or that
// have new events; with all, every row. The first call scans to learn
// where presence and the event log stand, and returns only what the feed
// gathered. Rows of one call come from one snapshot.
func (w *OverviewWatch) Next(ctx context.Context, all, scan bool) (OverviewChanges, error) {
	s := w.s
	ids, names, feedAll := s.waiters.feed.takeChanged()
	all = all || feedAll
	scan = scan || all || !w.started
	if scan {
		now := s.clock.Now()
		parked := map[int64]bool{}
		for _, id := range s.waiters.Agents() {
			parked[id] = true
		}
		reachable := func(id int64) bool { return s.paths.Reachable(id, now) }
		ids = append(ids, s.presence.moved(w.shown, parked, reachable, now, s.cfg.Health, all || !w.started)...)
	}
	out := OverviewChanges{All: all, Beat: s.beat.Load()}
	var rows []OverviewRow
	var now time.Time
	err := view(ctx, s.store, func(tx livenessTx) error {
		if scan {
			evs, err := w.newEvents(tx)
			if err != nil {
				return err
			}
			if len(evs) >= maxWatchedEvents {
				out.All = true
			}
			for _, e := range evs {
				if e.AgentID != 0 {
					ids = append(ids, e.AgentID)
				}
			}
		}
		if !out.All {
			for _, n := range names { // admin calls: few
				a, err := tx.AgentByName(n)
				if ErrorCode(err) == ENOTFOUND {
					out.Gone = append(out.Gone, n)
					continue
				} else if err != nil {
					return err
				}
				ids = append(ids, a.ID)
			}
			slices.Sort(ids)
			if ids = slices.Compact(ids); len(ids) == 0 {
				return nil
			}
		}
		// An ID not found is an agent deleted: its name, if a view showed
		// it, comes from the admin call.
		var err error
		now = s.clock.Now()
		rows, err = tx.OverviewRows(out.All, ids)
		return err
	})
	if err != nil {
		return OverviewChanges{}, err
	}
	out.Rows = s.overviews(rows, now)
	w.started = true
	return out, nil
}

// listEventsTx reads the event log.
type listEventsTx interface {
	ListEvents(q EventQuery) ([]*Event, error)
}

// newEvents returns the events recorded since the last call (the first
// call only finds where the log ends).
func (w *OverviewWatch) newEvents(tx listEventsTx) ([]*Event, error) {
	if !w.started {
		last, err := tx.ListEvents(EventQuery{Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(last) > 0 {
			w.events = last[len(last)-1].ID
		}
		return nil, nil
	}
	evs, err := tx.ListEvents(EventQuery{AfterID: w.events, Limit: maxWatchedEvents})
	if err != nil {
		return nil, err
	}
	if len(evs) > 0 {
		w.events = evs[len(evs)-1].ID
	}
	return evs, nil
}
