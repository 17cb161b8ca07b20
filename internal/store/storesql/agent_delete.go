package storesql

import (
	"math"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentDeleteTx. Deleting a message takes its
// deliveries by cascade; the recipients' unread counters
// (0004_inbox_counts) and the full-text index follow in the same
// statement (SQLite's triggers, PostgreSQL's statement triggers and search
// column). In PostgreSQL every statement here needs the exclusive write
// lock: no post runs beside a deletion.

// DeleteSentMessages implements hub.AgentDeleteTx. Messages have no index
// by sender: the batch reads the next scan IDs of the primary key, then
// deletes the sender's among them.
func (x Statements) DeleteSentMessages(sender string, after int64, scan, limit int) (hub.SentBatch, error) {
	ends, err := column[int64](x.DB, `SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?`, after, scan-1)
	if err != nil {
		return hub.SentBatch{}, err
	}
	hi := int64(math.MaxInt64) // the window's last ID
	if len(ends) > 0 {
		hi = ends[0]
	}
	sent, err := column[int64](x.DB, `SELECT id FROM messages WHERE id > ? AND id <= ? AND sender = ? ORDER BY id LIMIT ?`, after, hi, sender, limit)
	if err != nil {
		return hub.SentBatch{}, err
	}
	if len(sent) > 0 {
		if _, err := x.DB.Exec(`DELETE FROM messages WHERE id > ? AND id <= ? AND sender = ?`, after, sent[len(sent)-1], sender); err != nil {
			return hub.SentBatch{}, err
		}
	}
	return hub.NewSentBatch(sent, after, hi, len(ends) == 0, limit), nil
}

// DeleteAgentRows implements hub.AgentDeleteTx: the oldest limit
// deliveries to the agent first, then its rows of each table of
// row.AgentHistory, limit rows in all.
func (x Statements) DeleteAgentRows(agentID int64, limit int) (int64, error) {
	ends, err := column[int64](x.DB, `SELECT message_id FROM deliveries WHERE agent_id = ? ORDER BY message_id LIMIT 1 OFFSET ?`, agentID, limit-1)
	if err != nil {
		return 0, err
	}
	upTo := int64(math.MaxInt64)
	if len(ends) > 0 {
		upTo = ends[0]
	}
	n, err := x.deleteDeliveriesUpTo(agentID, upTo)
	if err != nil {
		return n, err
	}
	for _, h := range row.AgentHistory {
		if n >= int64(limit) {
			break
		}
		d, err := x.DB.Exec(h.DeleteBatch("?", "?"), agentID, agentID, int64(limit)-n)
		n += d
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// deleteDeliveriesUpTo deletes the deliveries to agentID of the messages
// up to upTo, with the hub's own direct messages that only it received.
func (x Statements) deleteDeliveriesUpTo(agentID, upTo int64) (int64, error) {
	alone, err := x.DB.Exec(`DELETE FROM messages WHERE id IN (
			SELECT message_id FROM deliveries WHERE agent_id = ? AND message_id <= ?)
		AND sender = ? AND channel = ''
		AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.message_id = messages.id AND o.agent_id <> ?)`,
		agentID, upTo, hub.SenderOrchestrator, agentID)
	if err != nil {
		return 0, err
	}
	n, err := x.DB.Exec(`DELETE FROM deliveries WHERE agent_id = ? AND message_id <= ?`, agentID, upTo)
	return alone + n, err
}

// DeleteAgent implements hub.AgentDeleteTx. The row's foreign keys take
// the rest by cascade: token (in the row), liveness, checks, pulse
// settings, deep work, injections, pulses sent, reservations,
// channel memberships, unread counters and what the batches left. The
// deletion is told to Changed.
func (x Statements) DeleteAgent(a *hub.Agent, after int64) (int64, error) {
	sent, err := x.DB.Exec(`DELETE FROM messages WHERE id > ? AND sender = ?`, after, a.Name)
	if err != nil {
		return 0, err
	}
	if _, err := x.deleteDeliveriesUpTo(a.ID, math.MaxInt64); err != nil {
		return sent, err
	}
	if _, err := x.DB.Exec(`DELETE FROM cron_runs WHERE job_id IN (SELECT id FROM cron_jobs WHERE target = ?)`, a.Name); err != nil {
		return sent, err
	}
	if _, err := x.DB.Exec(`DELETE FROM cron_jobs WHERE target = ?`, a.Name); err != nil {
		return sent, err
	}
	n, err := x.DB.Exec(`DELETE FROM agents WHERE id = ?`, a.ID)
	if err != nil {
		return sent, err
	}
	if n == 0 {
		return sent, hub.NoAgentNamed(a.Name)
	}
	if x.Changed == nil {
		return sent, nil
	}
	return sent, x.Changed(a.ID, hub.AgentDeleted)
}
