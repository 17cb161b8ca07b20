package hub

import "fmt"

// Deleting an agent removes it and everything of it from the hub, for good:
// its row and token, its liveness, health, checks, activity logs,
// checkpoints, deep work and events, its deliveries, read cursor, read marks
// and unread counters (so its receipts and acknowledgements), its
// injections, the records of the pulses sent to it, its
// reservations and channel memberships, the cron jobs that target it (with
// their runs), the messages it sent (with their deliveries to the others,
// whose unread counters follow, their search entries and their receipts),
// and the hub's own messages (nudges, pulses, cron) that only it received.
// Messages others sent to it stay for the others. One hub-wide event,
// EventAgentDeleted, records the deletion. The name is free again: an agent
// registered under it afterwards starts empty.
//
// Only a disabled agent can be deleted, so no live agent disappears by a
// typo. The bulky rows (the messages it sent, the deliveries to it, its
// logs, checkpoints, events and read marks) go first in batches, each its
// own short write transaction as retention's; then one transaction deletes
// what is left with the agent's row and records the event. A deletion
// stopped half way (the hub stopped, the agent enabled meanwhile) leaves
// the agent in place with less history; running it again finishes it.

// EventAgentDeleted is the hub-wide event of a deleted agent; its detail
// names the agent.
const EventAgentDeleted EventKind = "agent_deleted"

// AgentDeleteBatch is the number of rows one batch of an agent's deletion
// deletes; AgentDeleteScan, the number of messages one batch reads in ID
// order looking for the ones the agent sent (messages are not indexed by
// sender: posting pays for no index that only a deletion reads).
const (
	AgentDeleteBatch = 500
	AgentDeleteScan  = 5000
)

// AgentDeletion is what DeleteAgent deleted.
type AgentDeletion struct {
	Agent *Agent
	// MessagesDeleted counts the messages it sent; RowsDeleted, its other
	// rows deleted in batches (deliveries to it, the hub's messages only it
	// received, logs, checkpoints, events, read marks) — the few rows
	// deleted with its agent row are not counted.
	MessagesDeleted, RowsDeleted int64
}

// checkDeletable decides whether agent a may be deleted: only once it is
// disabled. Errors: EPRECONDITION naming the command that disables it.
func checkDeletable(a *Agent) error {
	if !a.Disabled() {
		return Errorf(EPRECONDITION, "agent %q is enabled: disable it first with `hubctl agent disable %s`, then delete it", a.Name, a.Name)
	}
	return nil
}

// deletedDetail is the detail of the EventAgentDeleted event.
func deletedDetail(d AgentDeletion) string {
	return fmt.Sprintf("agent %q (project %s) deleted with %d messages it sent and %d other rows",
		d.Agent.Name, ProjectOr(d.Agent.Project), d.MessagesDeleted, d.RowsDeleted)
}
