package postgres

import (
	"math"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentDeleteTx. Deleting a message takes its
// deliveries by cascade; the statement triggers keep the recipients' unread
// counters (0004_inbox_counts.sql), and the search column goes with the
// row. Every statement here needs the exclusive write lock (none is marked
// sharedSafe): no post runs beside a deletion.

// DeleteSentMessages implements hub.AgentDeleteTx. Messages have no index
// by sender: the batch reads the next scan IDs of the primary key, then
// deletes the sender's among them.
func (t *Tx) DeleteSentMessages(sender string, after int64, scan, limit int) (hub.SentBatch, error) {
	ends, err := queryColumn[int64](t, `SELECT id FROM messages WHERE id > $1 ORDER BY id LIMIT 1 OFFSET $2`, after, scan-1)
	if err != nil {
		return hub.SentBatch{}, err
	}
	hi := int64(math.MaxInt64) // the window's last ID
	if len(ends) > 0 {
		hi = ends[0]
	}
	sent, err := queryColumn[int64](t, `SELECT id FROM messages WHERE id > $1 AND id <= $2 AND sender = $3 ORDER BY id LIMIT $4`, after, hi, sender, limit)
	if err != nil {
		return hub.SentBatch{}, err
	}
	if len(sent) > 0 {
		if _, err := t.exec(`DELETE FROM messages WHERE id > $1 AND id <= $2 AND sender = $3`, after, sent[len(sent)-1], sender); err != nil {
			return hub.SentBatch{}, err
		}
	}
	return hub.NewSentBatch(sent, after, hi, len(ends) == 0, limit), nil
}

// DeleteAgentRows implements hub.AgentDeleteTx.
func (t *Tx) DeleteAgentRows(agentID int64, limit int) (int64, error) {
	ends, err := queryColumn[int64](t, `SELECT message_id FROM deliveries WHERE agent_id = $1 ORDER BY message_id LIMIT 1 OFFSET $2`, agentID, limit-1)
	if err != nil {
		return 0, err
	}
	upTo := int64(math.MaxInt64)
	if len(ends) > 0 {
		upTo = ends[0]
	}
	n, err := t.deleteDeliveriesUpTo(agentID, upTo)
	if err != nil {
		return n, err
	}
	for _, h := range row.AgentHistory {
		if n >= int64(limit) {
			break
		}
		tag, err := t.exec(h.DeleteBatch("$1", "$2"), agentID, int64(limit)-n)
		if err != nil {
			return n, err
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

// deleteDeliveriesUpTo deletes the deliveries to agentID of the messages
// up to upTo, with the hub's own direct messages that only it received.
func (t *Tx) deleteDeliveriesUpTo(agentID, upTo int64) (int64, error) {
	alone, err := t.exec(`DELETE FROM messages WHERE id IN (
			SELECT message_id FROM deliveries WHERE agent_id = $1 AND message_id <= $2)
		AND sender = $3 AND channel = ''
		AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.message_id = messages.id AND o.agent_id <> $1)`,
		agentID, upTo, hub.SenderOrchestrator)
	if err != nil {
		return 0, err
	}
	tag, err := t.exec(`DELETE FROM deliveries WHERE agent_id = $1 AND message_id <= $2`, agentID, upTo)
	return alone.RowsAffected() + tag.RowsAffected(), err
}

// DeleteAgent implements hub.AgentDeleteTx. The row's foreign keys take
// the rest by cascade: token (in the row), liveness, checks, pulse
// settings, deep work, injections, pulses sent, reservations,
// channel memberships, unread counters and what the batches left. Every
// replica hears of it (agentChanged).
func (t *Tx) DeleteAgent(a *hub.Agent, after int64) (int64, error) {
	sent, err := t.exec(`DELETE FROM messages WHERE id > $1 AND sender = $2`, after, a.Name)
	if err != nil {
		return 0, err
	}
	if _, err := t.deleteDeliveriesUpTo(a.ID, math.MaxInt64); err != nil {
		return sent.RowsAffected(), err
	}
	if _, err := t.exec(`DELETE FROM cron_runs WHERE job_id IN (SELECT id FROM cron_jobs WHERE target = $1)`, a.Name); err != nil {
		return sent.RowsAffected(), err
	}
	if _, err := t.exec(`DELETE FROM cron_jobs WHERE target = $1`, a.Name); err != nil {
		return sent.RowsAffected(), err
	}
	tag, err := t.exec(`DELETE FROM agents WHERE id = $1`, a.ID)
	if err != nil {
		return sent.RowsAffected(), err
	}
	if tag.RowsAffected() == 0 {
		return sent.RowsAffected(), hub.NoAgentNamed(a.Name)
	}
	return sent.RowsAffected(), t.agentChanged(a.ID, hub.AgentDeleted)
}
