package app

import "context"

// startOrchestrator starts the orchestrator loop (issue 5 wires it here) and
// sets m.tickStats.
func (m *Main) startOrchestrator(ctx context.Context) error {
	if m.NoOrchestrator {
		return nil
	}
	return nil
}
