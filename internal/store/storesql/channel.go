package storesql

import (
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements the reads of hub.MessageTx that need no message
// column, and leaving a channel; posts, inboxes and what a post creates
// on its way (EnsureChannel, InsertChannelMember) are each store's.

// MaxMessageID implements hub.MessageTx.
func (x Statements) MaxMessageID() (int64, error) {
	var id int64
	err := x.DB.QueryRow(`SELECT COALESCE(MAX(id), 0) FROM messages`).Scan(&id)
	return id, err
}

// RecipientsAfter implements hub.MessageTx.
func (x Statements) RecipientsAfter(after int64) ([]int64, error) {
	return column[int64](x.DB, `SELECT DISTINCT agent_id FROM deliveries WHERE message_id > ?`, after)
}

// ChannelByName implements hub.MessageTx.
func (x Statements) ChannelByName(project, name string) (int64, error) {
	var id int64
	err := x.DB.QueryRow(`SELECT id FROM channels WHERE project = ? AND name = ?`, project, name).Scan(&id)
	if x.DB.IsNoRows(err) {
		return 0, hub.NoChannel(name)
	}
	return id, err
}

// DeleteChannelMember implements hub.MessageTx.
func (x Statements) DeleteChannelMember(channelID, agentID int64) error {
	_, err := x.DB.Exec(`DELETE FROM channel_members WHERE channel_id = ? AND agent_id = ?`, channelID, agentID)
	return err
}

// ChannelMembers implements hub.MessageTx.
func (x Statements) ChannelMembers(channelID int64) ([]int64, error) {
	return column[int64](x.DB, `SELECT cm.agent_id FROM channel_members cm JOIN agents a ON a.id = cm.agent_id
		WHERE cm.channel_id = ? AND a.disabled_at = 0 ORDER BY cm.agent_id`, channelID)
}

// ChannelMemberNames implements hub.MessageTx.
func (x Statements) ChannelMemberNames(channelID int64) ([]string, error) {
	return column[string](x.DB, `SELECT a.name FROM channel_members cm JOIN agents a ON a.id = cm.agent_id
		WHERE cm.channel_id = ? ORDER BY a.name`, channelID)
}

// ListChannels implements hub.MessageTx.
func (x Statements) ListChannels(agentID int64) ([]hub.ChannelSummary, error) {
	return all(x.DB, func(s row.Scanner) (hub.ChannelSummary, error) {
		var c hub.ChannelSummary
		err := s.Scan(&c.Project, &c.Name, &c.MemberCount, &c.Joined)
		return c, err
	}, `SELECT c.project, c.name, COUNT(cm.agent_id), COUNT(cm.agent_id) FILTER (WHERE cm.agent_id = ?) > 0
		FROM channels c LEFT JOIN channel_members cm ON cm.channel_id = c.id
		GROUP BY c.id ORDER BY c.project, c.name`, agentID)
}
