package hub

// The errors every store answers with when a row it is asked for is
// missing, or a name it is asked to take is taken: worded here once, for
// SQLite and PostgreSQL alike.

// NoAgentNamed is ENOTFOUND for a name no agent has.
func NoAgentNamed(name string) error { return Errorf(ENOTFOUND, "no agent named %q", name) }

// NoAgentWithID is ENOTFOUND for an agent ID no agent has.
func NoAgentWithID() error { return Errorf(ENOTFOUND, "no agent with that ID") }

// NoAgentWithToken is ENOTFOUND for a token no agent holds.
func NoAgentWithToken() error { return Errorf(ENOTFOUND, "no agent holds that token") }

// AgentNameTaken is ECONFLICT for a new agent's name that another has.
func AgentNameTaken(name string) error {
	return Errorf(ECONFLICT, "an agent named %q already exists", name)
}

// TokenTaken is ECONFLICT for a token another agent holds.
func TokenTaken() error { return Errorf(ECONFLICT, "another agent holds that token") }

// NoDeepWork is ENOTFOUND for a deep work declaration's ID.
func NoDeepWork(id int64) error { return Errorf(ENOTFOUND, "no deep work declaration %d", id) }

// DeepWorkTaken is ECONFLICT for a declaration by an agent that has an
// active one.
func DeepWorkTaken() error {
	return Errorf(ECONFLICT, "the agent already has an active deep work declaration")
}

// NoCronJobNamed is ENOTFOUND for a name no cron job has.
func NoCronJobNamed(name string) error {
	return Errorf(ENOTFOUND, "no cron job named %q: list them with `hubctl cron list`", name)
}

// NoCronJob is ENOTFOUND for a cron job's ID.
func NoCronJob(id int64) error { return Errorf(ENOTFOUND, "no cron job with ID %d", id) }

// CronJobNameTaken is ECONFLICT for a new cron job's name that another has.
func CronJobNameTaken(name string) error {
	return Errorf(ECONFLICT, "a cron job named %q already exists: choose another name or remove it with `hubctl cron rm %s`", name, name)
}

// NoPulse is ENOTFOUND for an agent without a pulse.
func NoPulse() error { return Errorf(ENOTFOUND, "no pulse is configured for this agent") }

// NoReservation is ENOTFOUND for a reservation's ID.
func NoReservation(id int64) error {
	return Errorf(ENOTFOUND, "reservation %d does not exist (released or expired): list the reservations to see their IDs", id)
}

// NoJoinCodeFor is ENOTFOUND for a join code's text that no code has.
func NoJoinCodeFor() error {
	return Errorf(ENOTFOUND, "no such join code: `hubctl join-codes list` shows their IDs")
}

// NoJoinCode is ENOTFOUND for a join code's ID.
func NoJoinCode(id int64) error {
	return Errorf(ENOTFOUND, "join code %d does not exist: `hubctl join-codes list` shows their IDs", id)
}

// NoInboxItem is ENOTFOUND for an inbox item's ID.
func NoInboxItem(id int64) error {
	return Errorf(ENOTFOUND, "inbox item %d does not exist: `hubctl inbox` lists them", id)
}

// NoOpenItem is ENOTFOUND for a kind of inbox item none of which is open.
func NoOpenItem(kind ItemKind) error { return Errorf(ENOTFOUND, "no open %s item", kind) }

// NoPerson is ENOTFOUND for a person's token or ID that no person has.
func NoPerson() error { return Errorf(ENOTFOUND, "no such person: `hubctl people list` shows them") }

// NoMessage is ENOTFOUND for a message's ID.
func NoMessage(id int64) error { return Errorf(ENOTFOUND, "no message %d", id) }

// NoChannel is ENOTFOUND for a channel's name.
func NoChannel(name string) error { return Errorf(ENOTFOUND, "no channel %q", name) }

// NoDelivery is ENOTFOUND for a message an agent was not sent.
func NoDelivery(messageID, agentID int64) error {
	return Errorf(ENOTFOUND, "no delivery of message %d to agent %d", messageID, agentID)
}

// ProjectNameTaken is ECONFLICT for a new project's name that another has.
func ProjectNameTaken(name string) error {
	return Errorf(ECONFLICT, "a project named %q already exists", name)
}

// JoinCodeTaken is ECONFLICT for a new join code whose hash another code
// has (a code drawn twice).
func JoinCodeTaken() error {
	return Errorf(ECONFLICT, "a join code with the same secret already exists: make a new one")
}
