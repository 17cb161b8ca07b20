package hub

// Parks and streams: what a principal holds open in the hub. A park is a
// call that waits for something (WaitForMessages and next_task, parked as
// Waiters; an approval's wait and ask_human, parked on their inbox item);
// a stream is a response that stays open (the dashboard's change stream,
// a Feed subscription; an agent's stream of wake-ups, Subscribe, which is
// registered as one of its Waiters and counts as one of its waits). Each is bounded per principal by this one table,
// besides the hub-wide bounds (--max-waiters, the inbox's MaxParked, the
// feed's size), and each ends when its principal is revoked: Waiters.Revoke
// ends an agent's waits and its parks on inbox items (answerWaits.revoke,
// through Agents), Feed.End a person's streams (People.RevokePerson). An
// MCP-over-HTTP session holds nothing of its own: the calls it parks are
// the agent's waits, ended by the same revocation.
//
//	kind                         agent            person   admin
//	waits, next_task, Subscribe  --max-waiters-per-agent (WaitLimits.PerAgent)
//	approvals and ask_human      maxItemParks     -        -
//	change streams               -                maxStreams  the rest
//	MCP-over-HTTP sessions       16 per token (mcpbridge's MaxSessionsPerToken; the oldest closes)
//
// The admin's streams are bounded only by the feed's size, of which
// streamsKeptForAdmin are never given to people, so that however many
// streams people open, the admin's dashboard still connects.
const (
	// maxItemParks is how many calls one agent may have parked on inbox
	// items at once (approvals and ask_human together).
	maxItemParks = 4
	// maxStreams is how many change streams one person may hold.
	maxStreams = 8
	// streamsKeptForAdmin is how many of the feed's streams people may
	// never take.
	streamsKeptForAdmin = 8
)

// StreamOwner names the principal holding a stream: "" for the admin, the
// person's name for a person.
type StreamOwner string

// AdminStreams is the admin's StreamOwner.
const AdminStreams StreamOwner = ""
