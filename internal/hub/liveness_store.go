package hub

// LivenessTx stores activity logs, checkpoints, deep work, per-agent liveness
// state and events. Owned by the liveness slice (issue 4).
type LivenessTx interface {
}
