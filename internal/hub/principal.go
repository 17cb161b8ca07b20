package hub

// Principals are who may act on the hub: agents, people (the operator
// holding the admin token among them) and the hub itself. They share one
// namespace: a name held by one kind (or reserved for the hub and the
// people around it, reservedNames) is refused to every other, by every
// door that creates one (claimName in principal_service.go). Every message
// records the kind of its sender when it is written, so a reader can tell
// a person's words from an agent's text that only claims to be theirs.
//
// A hub made before names were shared may hold an agent and a person of
// one name. Then the person keeps the name: a message to it, or an
// @mention of it, goes to the person (Messages.Route), and the agent is reached by
// none; its own messages still say kind agent.

// SenderKind is the kind of principal a message came from.
type SenderKind string

// The kinds of sender.
const (
	ByAgent  SenderKind = "agent"  // an agent, with its token
	ByPerson SenderKind = "person" // a person, with a person token
	ByAdmin  SenderKind = "admin"  // the admin token (admin, operator)
	ByHub    SenderKind = "hub"    // the hub's own messages: nudges, pulses, cron, notices
)

// senderKindOf is the kind of the sender of a message posted by sender (an
// agent) or, for a nil sender, named from: the admin's names, the hub's,
// else a person's.
func senderKindOf(sender *Agent, from string) SenderKind {
	switch {
	case sender != nil:
		return ByAgent
	case from == SenderAdmin || from == Operator:
		return ByAdmin
	case from == SenderOrchestrator:
		return ByHub
	}
	return ByPerson
}
