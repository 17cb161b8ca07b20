package hub

import (
	"context"
	"time"
)

// Store is the hub's persistence. Implementations: internal/store/sqlite.
//
// Update runs fn in a write transaction and commits it; an error returned by
// fn rolls back fn's writes (and only fn's: a store may group several Update
// calls into one commit, each in its own savepoint). Update returns once the
// writes are durable to the configured level, so the caller may acknowledge
// them. fn must not keep tx, and must not have effects outside the store
// (notify waiters after Update returns).
//
// View runs fn in a read-only snapshot.
type Store interface {
	Update(ctx context.Context, fn func(tx Tx) error) error
	View(ctx context.Context, fn func(tx Tx) error) error
	// Close waits for pending writes and closes the store.
	Close() error
}

// Tx is what a transaction can do. Methods return *Error values with codes
// ENOTFOUND and ECONFLICT where said, and wrapped driver errors otherwise.
//
// The interface is split by noun; each group lives beside its domain code
// (LivenessTx in liveness_store.go, ScheduleTx in schedule_store.go).
type Tx interface {
	AgentTx
	MessageTx
	MetaTx
	LivenessTx
	ScheduleTx
}

// AgentTx stores agents and their tokens.
type AgentTx interface {
	// CreateAgent inserts a and sets a.ID. ECONFLICT if the name is taken.
	CreateAgent(a *Agent, tokenHash []byte) error
	// AgentByName returns the agent named name. ENOTFOUND.
	AgentByName(name string) (*Agent, error)
	// AgentByID returns the agent with the given ID. ENOTFOUND.
	AgentByID(id int64) (*Agent, error)
	// AgentByTokenHash returns the agent holding the token. ENOTFOUND.
	AgentByTokenHash(hash []byte) (*Agent, error)
	// ListAgents returns agents ordered by name.
	ListAgents(includeDisabled bool) ([]*Agent, error)
	// CountAgents returns the number of agents, disabled ones included.
	CountAgents() (int64, error)
	// UpdateAgent writes every mutable field of a. ENOTFOUND.
	UpdateAgent(a *Agent) error
	// SetAgentToken replaces the agent's token hash; nil revokes the token.
	SetAgentToken(agentID int64, hash []byte) error
	// TouchAgents records last-seen times and interaction beats in bulk.
	TouchAgents(touches []Touch) error
}

// Touch is one agent's flushed presence: see Presence.Flush.
type Touch struct {
	AgentID             int64
	LastSeenAt          time.Time
	LastInteractionBeat int64
}

// MessageTx stores messages, deliveries, read cursors and channels.
type MessageTx interface {
	// InsertMessage inserts m with its deliveries and sets m.ID.
	InsertMessage(m *Message, deliveries []Delivery) error
	// MessageByID returns one message. ENOTFOUND.
	MessageByID(id int64) (*Message, error)
	// Inbox returns messages delivered to agentID matching q, oldest first.
	Inbox(agentID int64, q InboxQuery) ([]*Message, error)
	// InboxCounts returns the number of messages delivered to agentID with an
	// ID above after, how many of them mention the agent, and the newest
	// delivered message ID (0 if none).
	InboxCounts(agentID, after int64) (unread, mentions, latest int64, err error)
	// ListMessages returns messages for an admin view, oldest first.
	ListMessages(q MessageQuery) ([]*Message, error)
	// MaxMessageID returns the newest message ID (0 if none).
	MaxMessageID() (int64, error)
	// RecipientsAfter returns the IDs of the agents that received a message
	// with an ID above after (used by the fallback watcher).
	RecipientsAfter(after int64) ([]int64, error)

	// EnsureChannel returns the ID of the channel named name (with '#'),
	// creating it if needed.
	EnsureChannel(name string, now time.Time) (int64, error)
	// ChannelByName returns a channel's ID. ENOTFOUND.
	ChannelByName(name string) (int64, error)
	// JoinChannel adds an agent to a channel (no-op if already a member).
	JoinChannel(channelID, agentID int64, now time.Time) error
	// LeaveChannel removes an agent from a channel (no-op if not a member).
	LeaveChannel(channelID, agentID int64) error
	// ChannelMembers returns the member agents' IDs.
	ChannelMembers(channelID int64) ([]int64, error)
	// ChannelMemberNames returns the member agents' names, sorted.
	ChannelMemberNames(channelID int64) ([]string, error)
}

// MetaTx stores small hub-wide values (the beat counter, schema facts).
type MetaTx interface {
	// Meta returns the value stored under key, "" if none.
	Meta(key string) (string, error)
	// SetMeta stores value under key.
	SetMeta(key, value string) error
}
