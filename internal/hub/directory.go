package hub

import "time"

// Peer is another agent as an agent sees it in the directory: who it is,
// what it does and whether it is around to answer.
type Peer struct {
	Name        string
	DisplayName string
	Role        string
	Description string
	Presence    PresenceState
	LastSeenAt  time.Time
}

// ChannelSummary is one channel as the directory lists it.
type ChannelSummary struct {
	Name        string
	MemberCount int64
	Joined      bool // the asking agent is a member
}
