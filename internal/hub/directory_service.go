package hub

import "context"

// ListPeers lists the enabled agents caller may message (its project's and
// linked projects'; every agent for nil) with their presence and
// reachability, by name, so that an agent knows whom it can message and
// whether a message would reach them now. Retired agents are left out
// (retire.go).
func (s *Messages) ListPeers(ctx context.Context, caller *Agent) ([]Peer, error) {
	var as []*Agent
	err := view(ctx, s.store, func(tx messagesTx) (err error) { as, err = tx.ListAgents(false); return err })
	if err != nil {
		return nil, err
	}
	if as, err = visibleOf(ctx, s.store, caller, as, AgentProject); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	out := make([]Peer, 0, len(as))
	for _, a := range as {
		p := s.presenceAt(a, now)
		if Retired(a, p.LastSeenAt) {
			continue
		}
		out = append(out, Peer{
			Name: a.Name, DisplayName: a.DisplayName, Role: a.Role, Description: a.Description, Project: ProjectOr(a.Project),
			Presence: p.State, LastSeenAt: p.LastSeenAt, Reach: s.paths.Reach(a.ID, now),
		})
	}
	return out, nil
}

// ListChannels lists the channels caller may post to (its project's and
// linked projects'; every channel for nil, the admin) by project and name,
// with the member count and whether caller is a member.
func (s *Messages) ListChannels(ctx context.Context, caller *Agent) ([]ChannelSummary, error) {
	var out []ChannelSummary
	err := view(ctx, s.store, func(tx messagesTx) error {
		var id int64
		if caller != nil {
			id = caller.ID
		}
		var err error
		out, err = tx.ListChannels(id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return visibleOf(ctx, s.store, caller, out, ChannelProject)
}
