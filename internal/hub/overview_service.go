package hub

import (
	"context"
	"fmt"
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
// health, unread counts and parked waits, read in one snapshot.
func (s *Liveness) AgentOverviews(ctx context.Context, includeDisabled bool) ([]AgentOverview, error) {
	var out []AgentOverview
	err := view(ctx, s.store, func(tx livenessTx) error {
		as, err := tx.ListAgents(includeDisabled)
		if err != nil {
			return err
		}
		out = make([]AgentOverview, 0, len(as))
		for _, a := range as {
			o := AgentOverview{Agent: a, ParkedWaits: s.waiters.AgentCount(a.ID)}
			if o.Health, err = s.agentHealth(tx, a); err != nil {
				return fmt.Errorf("health of %s: %w", a.Name, err)
			}
			if o.Unread, o.Mentions, _, err = tx.InboxCounts(a.ID, a.ReadUpTo); err != nil {
				return fmt.Errorf("unread of %s: %w", a.Name, err)
			}
			out = append(out, o)
		}
		return nil
	})
	return out, err
}
