package hub

// ScheduleTx stores beats, nudges, pulses, cron jobs and runs. Owned by the
// orchestrator slice (issue 5).
type ScheduleTx interface {
}
