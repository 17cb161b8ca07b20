package hub

import (
	"context"
	"time"
)

// Calls parked on inbox items (a hook's approval, an ask_human question),
// held by the hub's registry of parked callers (park.go) like waits: a
// call registers before it looks at its item, so an answer committed
// between the look and the park still finds the wake-up pending (the
// channel is buffered), and wakeAnswer wakes the item's calls at the commit
// that closed it (core.wake).

// itemPark is one call parked on an item.
type itemPark struct {
	c       chan struct{}
	agentID int64
	revoked bool // guarded by Waiters.mu
}

func (p *itemPark) signal() {
	select {
	case p.c <- struct{}{}:
	default:
	}
}

// parkItem adds a call of agentID parked on item id. EEXHAUSTED past a
// limit (WaitLimits.Items, ItemsPerAgent).
func (ws *Waiters) parkItem(id, agentID int64) (*itemPark, func(), error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if err := ws.admitLocked(AgentPrincipal(agentID), parkItem); err != nil {
		return nil, nil, err
	}
	p := &itemPark{c: make(chan struct{}, 1), agentID: agentID}
	ws.items[id] = append(ws.items[id], p)
	done := false
	return p, func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		if done {
			return
		}
		done = true
		ps := ws.items[id]
		for i, x := range ps {
			if x == p {
				ps = append(ps[:i], ps[i+1:]...)
				break
			}
		}
		if len(ps) == 0 {
			delete(ws.items, id)
		} else {
			ws.items[id] = ps
		}
		ws.releaseLocked(AgentPrincipal(agentID), parkItem)
	}, nil
}

// itemRevoked reports whether p's agent was revoked.
func (ws *Waiters) itemRevoked(p *itemPark) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return p.revoked
}

// wakeAnswer wakes the calls parked on the inbox items ids (answered,
// expired or withdrawn).
func (ws *Waiters) wakeAnswer(ids ...int64) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, id := range ids {
		for _, p := range ws.items[id] {
			p.signal()
		}
	}
}

// parkedItems returns the IDs of the items calls are parked on.
func (ws *Waiters) parkedItems() []int64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ids := make([]int64, 0, len(ws.items))
	for id := range ws.items {
		ids = append(ids, id)
	}
	return ids
}

// parkOnItem parks agentID's call until item id leaves the open state
// (look says so), d passes on clock, ctx ends, stop is closed (the hub
// stops) or the agent is revoked. It registers before its first look, and
// returns the item as last seen.
func (ws *Waiters) parkOnItem(ctx context.Context, id, agentID int64, clock Clock, d time.Duration, stop <-chan struct{}, look func() (*InboxItem, error)) (*InboxItem, error) {
	p, done, err := ws.parkItem(id, agentID)
	if err != nil {
		return nil, err
	}
	defer done()
	t := clock.NewTimer(d)
	defer t.Stop()
	for {
		it, err := look()
		if err != nil || !it.Open() {
			return it, err
		}
		select {
		case <-p.c:
			if ws.itemRevoked(p) {
				return it, nil
			}
		case <-t.C():
			return it, nil
		case <-ctx.Done():
			return it, nil
		case <-stop:
			return it, nil
		}
	}
}
