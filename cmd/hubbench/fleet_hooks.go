package main

import (
	"sync"
	"time"
)

// bridgeHookRefresh is how long a bridge answers its agent's hooks without
// sending one to the hub: hub mcp's hookRefresh (internal/mcpbridge/hooks.go),
// one hook in this long keeps the hook path live for the hub.
const bridgeHookRefresh = 2 * time.Minute

// bridgeHooks answers the hooks of an agent holding a stream as its hub mcp
// does (internal/mcpbridge/hooks.go): a real agent's hooks ask the bridge
// of its session, which holds the stream, and the bridge answers "nothing
// new" itself while the stream is open, no frame brought a message since
// the last hook it sent to the hub, and that hook is less than
// bridgeHookRefresh old. Anything else is the hub's injection, which the
// bridge takes on its stream (grpcAgent.hookOnStream) on a hub that takes
// it there, and which goes to the hub (TakeInjection) on one that does not.
type bridgeHooks struct {
	mu       sync.Mutex
	open     bool      // the stream's first frame came and it has not ended
	seq      uint64    // counts what the hooks have not seen through the hub
	synced   uint64    // seq when a hook last came back from the hub
	syncedAt time.Time // and when
}

func newBridgeHooks() *bridgeHooks { return &bridgeHooks{seq: 1} }

// frame takes one frame of the stream with n messages.
func (h *bridgeHooks) frame(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open = true
	if n > 0 {
		h.seq++
	}
}

// ended takes the stream's end: what came meanwhile is the hub's to tell.
func (h *bridgeHooks) ended() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open = false
	h.seq++
}

// ask answers one hook run at now: quiet (false), or to the hub (true)
// with what to run once the hub has answered it.
func (h *bridgeHooks) ask(now time.Time) (toHub bool, answered func(at time.Time)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open && h.synced == h.seq && now.Sub(h.syncedAt) < bridgeHookRefresh {
		return false, nil
	}
	seq := h.seq
	return true, func(at time.Time) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if seq >= h.synced {
			h.synced, h.syncedAt = seq, at
		}
	}
}
