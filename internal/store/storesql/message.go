package storesql

import (
	"slices"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements the reads of messages of hub.MessageTx and
// hub.NoticeTx; posts and what a post creates on its way (EnsureChannel,
// InsertChannelMember) are each store's.

// MessageColumns are the columns ScanMessage reads, of messages m.
const MessageColumns = `m.id, m.sender, m.recipients, m.channel, m.body, m.mentions, m.reply_to, m.kind, m.created_at, m.priority, m.ack_required, m.project, m.sender_kind`

// ScanMessage scans a row of MessageColumns, then extra.
func (d Dialect) ScanMessage(s row.Scanner, extra ...any) (*hub.Message, error) {
	var m hub.Message
	var created int64
	var prio int32
	dest := append([]any{&m.ID, &m.From, d.KindsDest(&m.To), &m.Channel, &m.Body, d.KindsDest(&m.Mentions), &m.ReplyTo, &m.Kind, &created, &prio, &m.AckRequired, &m.Project, &m.SenderKind}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	m.To, m.Mentions, m.CreatedAt, m.Priority = unlist(m.To), unlist(m.Mentions), row.Time(created), hub.Priority(prio)
	return &m, nil
}

// messages runs a query of MessageColumns and returns its messages.
func (x Statements) messages(q string, args ...any) ([]*hub.Message, error) {
	return all(x.DB, func(s row.Scanner) (*hub.Message, error) { return x.Dialect.ScanMessage(s) }, q, args...)
}

// MessageByID implements hub.MessageTx.
func (x Statements) MessageByID(id int64) (*hub.Message, error) {
	m, err := x.Dialect.ScanMessage(x.DB.QueryRow(`SELECT `+MessageColumns+` FROM messages m WHERE m.id = ?`, id))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoMessage(id)
	}
	return m, err
}

// Inbox implements hub.MessageTx.
func (x Statements) Inbox(agentID int64, q hub.InboxQuery) ([]*hub.Message, error) {
	sqlq := `SELECT ` + inboxColumns + ` FROM deliveries d JOIN messages m ON m.id = d.message_id
		WHERE d.agent_id = ? AND d.message_id > ?`
	args := []any{agentID, q.After}
	if q.Channel != "" {
		sqlq += ` AND m.channel = ?`
		args = append(args, q.Channel)
	}
	args = append(args, q.Limit)
	return all(x.DB, func(s row.Scanner) (*hub.Message, error) { return x.inboxRow(s, &q.ReadUpTo) },
		sqlq+` ORDER BY d.message_id LIMIT ?`, args...)
}

// inboxColumns are an inbox's row: the message and its delivery to the
// reader (inboxRow).
const inboxColumns = MessageColumns + `, d.mention, d.delivered_at <> 0, d.in_context_at <> 0`

// inboxRow scans a row of inboxColumns, then the statement's further
// columns into also, as a message of the reader whose cursor readUpTo
// holds once the row is scanned.
func (x Statements) inboxRow(s row.Scanner, readUpTo *int64, also ...any) (*hub.Message, error) {
	var mention, delivered, inContext bool
	m, err := x.Dialect.ScanMessage(s, append([]any{&mention, &delivered, &inContext}, also...)...)
	if err != nil {
		return nil, err
	}
	m.MentionsYou, m.Unread, m.Delivered, m.InContext = mention, m.ID > *readUpTo, delivered, inContext
	return m, nil
}

// LookInbox implements hub.MessageTx: Inbox's statement joined to the
// agent's row, which says whether it is enabled and where its read cursor
// stands; only when it finds no message, a second statement reads the
// agent's state and its newest delivery (inbox_counts).
func (x Statements) LookInbox(agentID, after int64, fromReadCursor bool, limit int) (hub.InboxLook, error) {
	lk := hub.InboxLook{From: after}
	from, args := `?`, []any{agentID, after, limit}
	if fromReadCursor {
		from, args = `a.read_up_to`, []any{agentID, limit}
	}
	var readUpTo int64
	msgs, err := all(x.DB, func(s row.Scanner) (*hub.Message, error) { return x.inboxRow(s, &readUpTo, &readUpTo) },
		`SELECT `+inboxColumns+`, a.read_up_to
		FROM agents a JOIN deliveries d ON d.agent_id = a.id JOIN messages m ON m.id = d.message_id
		WHERE a.id = ? AND a.disabled_at = 0 AND d.message_id > `+from+` ORDER BY d.message_id LIMIT ?`, args...)
	if err != nil {
		return lk, err
	}
	if len(msgs) > 0 {
		if fromReadCursor {
			lk.From = readUpTo
		}
		lk.Messages = msgs
		return lk, nil
	}
	var disabledAt int64
	err = x.DB.QueryRow(`SELECT a.disabled_at, a.read_up_to, COALESCE(c.latest, 0) FROM agents a LEFT JOIN inbox_counts c ON c.agent_id = a.id
		WHERE a.id = ?`, agentID).Scan(&disabledAt, &readUpTo, &lk.Latest)
	if x.DB.IsNoRows(err) {
		return lk, hub.NoAgentWithID()
	} else if err != nil {
		return lk, err
	}
	if disabledAt != 0 {
		return hub.InboxLook{Disabled: true}, nil
	}
	if fromReadCursor {
		lk.From = readUpTo
	}
	return lk, nil
}

// ReadCursor implements hub.MessageTx: the cursor and the counters of
// inbox_counts at it, one row.
func (x Statements) ReadCursor(agentID int64) (readUpTo, unread, latest int64, err error) {
	err = x.DB.QueryRow(`SELECT a.read_up_to, c.unread, c.latest FROM agents a JOIN inbox_counts c ON c.agent_id = a.id
		WHERE a.id = ?`, agentID).Scan(&readUpTo, &unread, &latest)
	if x.DB.IsNoRows(err) {
		return 0, 0, 0, hub.NoAgentWithID()
	}
	return readUpTo, unread, latest, err
}

// InboxCounts implements hub.MessageTx. For the agent's own read cursor,
// which is what every reply that reports a count passes, it reads the
// counters the triggers of inbox_counts keep (0004_inbox_counts.sql), so
// its cost does not grow with the backlog; for another cursor it counts
// the deliveries above that cursor.
func (x Statements) InboxCounts(agentID, after int64) (unread, mentions, latest int64, err error) {
	var readUpTo int64
	err = x.DB.QueryRow(`SELECT a.read_up_to, c.unread, c.mentions, c.latest FROM agents a JOIN inbox_counts c ON c.agent_id = a.id
		WHERE a.id = ?`, agentID).Scan(&readUpTo, &unread, &mentions, &latest)
	if x.DB.IsNoRows(err) {
		return 0, 0, 0, nil // no such agent: nothing delivered
	}
	if err != nil || after == readUpTo {
		return unread, mentions, latest, err
	}
	err = x.DB.QueryRow(`SELECT COUNT(*), COUNT(*) FILTER (WHERE mention) FROM deliveries WHERE agent_id = ? AND message_id > ?`,
		agentID, after).Scan(&unread, &mentions)
	return unread, mentions, latest, err
}

// ListMessages implements hub.MessageTx.
func (x Statements) ListMessages(q hub.MessageQuery) ([]*hub.Message, error) {
	sqlq := `SELECT ` + MessageColumns + ` FROM messages m WHERE m.id > ?`
	args := []any{q.After}
	if q.AgentID > 0 {
		sqlq += ` AND m.id IN (SELECT message_id FROM deliveries WHERE agent_id = ? AND message_id > ?)`
		args = append(args, q.AgentID, q.After)
	}
	if q.Channel != "" {
		sqlq += ` AND m.channel = ?`
		args = append(args, q.Channel)
	}
	if q.Project != "" {
		sqlq += ` AND m.project = ?`
		args = append(args, q.Project)
	}
	if len(q.Projects) > 0 {
		sqlq += ` AND m.project IN (?` + strings.Repeat(`, ?`, len(q.Projects)-1) + `)`
		for _, p := range q.Projects {
			args = append(args, p)
		}
	}
	order := ` ORDER BY m.id LIMIT ?`
	if q.Newest {
		order = ` ORDER BY m.id DESC LIMIT ?`
	}
	ms, err := x.messages(sqlq+order, append(args, q.Limit)...)
	if q.Newest {
		slices.Reverse(ms) // oldest first, as always
	}
	return ms, err
}

// QueuedDue implements hub.NoticeTx.
func (x Statements) QueuedDue(cutoff time.Time, limit int) ([]*hub.Message, error) {
	d := x.Dialect
	return x.messages(`SELECT `+MessageColumns+` FROM messages m
		WHERE m.queue_checked = `+d.False+` AND (m.ack_required = `+d.True+` OR m.priority = 4) AND m.created_at <= ?
		ORDER BY m.id LIMIT ?`, row.Nanos(cutoff), limit)
}
