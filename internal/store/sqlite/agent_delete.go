package sqlite

import (
	"math"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentDeleteTx. Deleting a message takes its
// deliveries by cascade; the triggers keep the recipients' unread counters
// (0004_inbox_counts.sql) and the full-text index, readers' tokens included
// (0014_search_readers.sql), in the same statement.

// DeleteSentMessages implements hub.AgentDeleteTx. Messages have no index
// by sender: the batch reads the next scan IDs of the table's own B-tree,
// then deletes the sender's among them.
func (t *Tx) DeleteSentMessages(sender string, after int64, scan, limit int) (hub.SentBatch, error) {
	ends, err := queryColumn[int64](t, `SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?`, after, scan-1)
	if err != nil {
		return hub.SentBatch{}, err
	}
	hi := int64(math.MaxInt64) // the window's last ID
	if len(ends) > 0 {
		hi = ends[0]
	}
	sent, err := queryColumn[int64](t, `SELECT id FROM messages WHERE id > ? AND id <= ? AND sender = ? ORDER BY id LIMIT ?`, after, hi, sender, limit)
	if err != nil {
		return hub.SentBatch{}, err
	}
	if len(sent) > 0 {
		if _, err := t.exec(`DELETE FROM messages WHERE id > ? AND id <= ? AND sender = ?`, after, sent[len(sent)-1], sender); err != nil {
			return hub.SentBatch{}, err
		}
	}
	return hub.NewSentBatch(sent, after, hi, len(ends) == 0, limit), nil
}

// DeleteAgentRows implements hub.AgentDeleteTx.
func (t *Tx) DeleteAgentRows(agentID int64, limit int) (int64, error) {
	n, err := t.deleteDeliveriesTo(agentID, limit)
	if err != nil {
		return n, err
	}
	for _, h := range row.AgentHistory {
		if n >= int64(limit) {
			break
		}
		res, err := t.exec(h.DeleteBatch("?1", "?2"), agentID, int64(limit)-n)
		if err != nil {
			return n, err
		}
		d, err := res.RowsAffected()
		n += d
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// deleteDeliveriesTo deletes the oldest limit deliveries to agentID, and
// the hub's own direct messages among them that no one else received.
func (t *Tx) deleteDeliveriesTo(agentID int64, limit int) (int64, error) {
	ends, err := queryColumn[int64](t, `SELECT message_id FROM deliveries WHERE agent_id = ? ORDER BY message_id LIMIT 1 OFFSET ?`, agentID, limit-1)
	if err != nil {
		return 0, err
	}
	upTo := int64(math.MaxInt64)
	if len(ends) > 0 {
		upTo = ends[0]
	}
	return t.deleteDeliveriesUpTo(agentID, upTo)
}

// deleteDeliveriesUpTo deletes the deliveries to agentID of the messages
// up to upTo, with the hub's own direct messages that only it received.
func (t *Tx) deleteDeliveriesUpTo(agentID, upTo int64) (int64, error) {
	res, err := t.exec(`DELETE FROM messages WHERE id IN (
			SELECT message_id FROM deliveries WHERE agent_id = ? AND message_id <= ?)
		AND sender = ? AND channel = ''
		AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.message_id = messages.id AND o.agent_id <> ?)`,
		agentID, upTo, hub.SenderOrchestrator, agentID)
	if err != nil {
		return 0, err
	}
	alone, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if res, err = t.exec(`DELETE FROM deliveries WHERE agent_id = ? AND message_id <= ?`, agentID, upTo); err != nil {
		return alone, err
	}
	n, err := res.RowsAffected()
	return alone + n, err
}

// DeleteAgent implements hub.AgentDeleteTx. The row's foreign keys take
// the rest by cascade: token (in the row), liveness, checks, pulse
// settings, deep work, injections, pulses sent, reservations,
// channel memberships, unread counters and what the batches left.
func (t *Tx) DeleteAgent(a *hub.Agent, after int64) (int64, error) {
	res, err := t.exec(`DELETE FROM messages WHERE id > ? AND sender = ?`, after, a.Name)
	if err != nil {
		return 0, err
	}
	sent, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if _, err := t.deleteDeliveriesUpTo(a.ID, math.MaxInt64); err != nil {
		return sent, err
	}
	if _, err := t.exec(`DELETE FROM cron_runs WHERE job_id IN (SELECT id FROM cron_jobs WHERE target = ?)`, a.Name); err != nil {
		return sent, err
	}
	if _, err := t.exec(`DELETE FROM cron_jobs WHERE target = ?`, a.Name); err != nil {
		return sent, err
	}
	if res, err = t.exec(`DELETE FROM agents WHERE id = ?`, a.ID); err != nil {
		return sent, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			err = hub.NoAgentNamed(a.Name)
		}
		return sent, err
	}
	return sent, nil
}
