package hub

import "time"

// Peer is another agent as an agent sees it in the directory: who it is,
// what it does and whether it is around to answer.
type Peer struct {
	Name        string
	DisplayName string
	Role        string
	Description string
	Project     string
	Presence    PresenceState
	LastSeenAt  time.Time
	Reach       Reachability
}

// ChannelSummary is one channel as the directory lists it.
type ChannelSummary struct {
	Project     string
	Name        string // "#name", unique within its project
	MemberCount int64
	Joined      bool // the asking agent is a member
}
