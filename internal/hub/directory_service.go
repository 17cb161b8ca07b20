package hub

import "context"

// ListPeers lists the enabled agents with their presence, by name, so that
// an agent knows whom it can message.
func (s *Service) ListPeers(ctx context.Context) ([]Peer, error) {
	as, err := s.ListAgents(ctx, false)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	out := make([]Peer, len(as))
	for i, a := range as {
		p := s.presenceAt(a, now)
		out[i] = Peer{
			Name: a.Name, DisplayName: a.DisplayName, Role: a.Role, Description: a.Description,
			Presence: p.State, LastSeenAt: p.LastSeenAt,
		}
	}
	return out, nil
}

// ListChannels lists every channel by name, with its member count and
// whether caller is a member (never, for a nil caller: the admin).
func (s *Service) ListChannels(ctx context.Context, caller *Agent) ([]ChannelSummary, error) {
	var out []ChannelSummary
	err := s.store.View(ctx, func(tx Tx) error {
		var id int64
		if caller != nil {
			id = caller.ID
		}
		var err error
		out, err = tx.ListChannels(id)
		return err
	})
	return out, err
}
