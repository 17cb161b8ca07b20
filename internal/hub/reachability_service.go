package hub

import (
	"context"
	"time"
)

// AgentPathTx stores the agents' paths (reachability.go), so that the
// other replicas on the same database, and this hub after a restart, see
// them.
type AgentPathTx interface {
	// PutPaths writes rows at now (rows of agents that no longer exist
	// are skipped), stamped with the store's write time (WrittenAt, on a
	// clock every process sharing the store agrees on). A row replaces the
	// stored row of its agent and path when that one is of the same
	// replica, runs out before it, or has run out at now; the stored
	// last-seen time only moves forward.
	PutPaths(rows []PathRow, now time.Time) error
	// PathsSince returns the rows written after since (every row for the
	// zero time) by replicas other than except, with their WrittenAt, and
	// the newest WrittenAt of every row stored, this replica's included
	// (zero when there is none): the mark the next read starts from.
	PathsSince(since time.Time, except string) (rows []PathRow, newest time.Time, err error)
}

// pathLoadMargin is how far before the newest row it read the next read
// of the paths goes back: a row is stamped before its transaction
// commits, so one stamped earlier may become visible later.
const pathLoadMargin = 30 * time.Second

// loadPaths reads the paths the other processes wrote since the newest
// row stored at the last read (this process's own rows, rewritten at each
// of its ticks, are not read back). The rows' stamps are the store's, so
// replicas whose clocks differ miss none.
func (s *Liveness) loadPaths(ctx context.Context) error {
	s.pathsMu.Lock()
	defer s.pathsMu.Unlock()
	var since time.Time
	if !s.pathsSeen.IsZero() {
		since = s.pathsSeen.Add(-pathLoadMargin)
	}
	var rows []PathRow
	var newest time.Time
	err := view(ctx, s.store, func(tx livenessTx) (err error) { rows, newest, err = tx.PathsSince(since, s.paths.id); return err })
	if err != nil {
		return err
	}
	s.paths.Load(rows)
	s.pathsSeen = later(s.pathsSeen, newest)
	return nil
}

// ReachOf returns agent a's paths and whether it can be reached now.
func (s *Liveness) ReachOf(a *Agent) Reachability {
	return s.paths.Reach(a.ID, s.clock.Now())
}

// EndSession records that the caller's session ended cleanly (an MCP
// session closed, a host's SessionEnd hook): the caller shows offline at
// once (until its next call, unless a wait of its is parked), and the path
// via, if given (hook, channel), stops counting as live. Errors: EINVALID.
func (s *Liveness) EndSession(ctx context.Context, caller *Agent, via string) error {
	v, err := ParseVia("via", via, ViaHook, ViaChannel)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	s.presence.End(caller, now)
	if v != 0 {
		s.paths.End(caller.ID, v, now)
	}
	return nil
}

// unreachableOf returns the recipients m named (to and mentions) that no
// live path reaches at now, in the order it named them.
func (s *core) unreachableOf(m *Message, now time.Time) []Unreachable {
	var out []Unreachable
	for _, a := range m.addressed {
		if r := s.paths.Reach(a.id, now); !r.Reachable {
			out = append(out, Unreachable{Name: a.name, Since: r.Since})
		}
	}
	return out
}
