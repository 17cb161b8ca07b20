package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

func joinNames(ns []string) string { return strings.Join(ns, ",") }

func splitNames(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// InsertMessage implements hub.MessageTx.
func (t *Tx) InsertMessage(m *hub.Message, deliveries []hub.Delivery) error {
	row.NormalPriority(m)
	var err error
	if m.ID, err = t.insert(`INSERT INTO messages (sender, recipients, channel, body, mentions, reply_to, kind, created_at, priority, ack_required, project, sender_kind)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.From, joinNames(m.To), m.Channel, m.Body, joinNames(m.Mentions), m.ReplyTo, m.Kind, row.Nanos(m.CreatedAt), int64(m.Priority), m.AckRequired, hub.ProjectOr(m.Project), string(m.SenderKind)); err != nil {
		return err
	}
	// One statement per delivery, prepared once in the connection's
	// statement cache.
	for _, d := range deliveries {
		if _, err := t.insert(`INSERT INTO deliveries (agent_id, message_id, mention, ack_required) VALUES (?, ?, ?, ?)`, d.AgentID, m.ID, d.Mention, m.AckRequired); err != nil {
			return err
		}
	}
	t.Changes.Delivered(deliveries)
	t.indexMessage(m, deliveries)
	return nil
}

// indexEntry is a message's row of the full-text index.
type indexEntry struct {
	id            int64
	body, readers string
}

// indexMessage queues a message for the full-text index, with its
// readers' tokens (0014_search_readers.sql): the text messages_fts_source
// gives back for it. The queue is written at the end of the write
// transaction, after every write of its batch (flushIndex): FTS4 writes
// an index segment at every savepoint and commit, so a batch of posts
// costs one segment, not one per post.
// The hub's own notices are left out (hub.Searchable), as the view leaves
// them out.
func (t *Tx) indexMessage(m *hub.Message, deliveries []hub.Delivery) {
	if !hub.Searchable(m.Kind) {
		return
	}
	t.unindexed = append(t.unindexed, indexEntry{m.ID, m.Body, readerTokens(deliveries)})
}

// flushIndex writes the queued messages into the full-text index, in the
// transaction that wrote them: those still there (a write may delete what
// it wrote). The entries go in one statement (up to indexChunk of them):
// a statement that may write several rows opens a statement savepoint, and
// FTS4 writes its pending terms as a segment at every savepoint, so one
// statement per entry wrote one segment per post (and merged them) even
// though the entries come after the batch's last savepoint. The statement
// has a power of two rows, the ones past the entries naming no message (ID
// 0), so that its few texts stay prepared in the statement cache instead
// of one being parsed for every batch.
func (t *Tx) flushIndex() error {
	for len(t.unindexed) > 0 {
		n := min(len(t.unindexed), indexChunk)
		size := bits.Len(uint(n - 1)) // the statement has 1<<size rows
		t.values = t.values[:0]
		for _, e := range t.unindexed[:n] {
			t.arg(e.id)
			t.arg(e.body)
			t.arg(e.readers)
		}
		for range 1<<size - n {
			t.arg(int64(0))
			t.arg("")
			t.arg("")
		}
		if _, err := t.execValues(indexTexts[size]); err != nil {
			return fmt.Errorf("index messages: %w", err)
		}
		t.unindexed = t.unindexed[n:]
	}
	return nil
}

// indexChunk is how many entries one statement of flushIndex writes at
// most: a power of two.
const indexChunk = 64

// indexTexts are flushIndex's statements, of 1, 2, 4 … indexChunk rows.
var indexTexts = func() []string {
	q := make([]string, bits.Len(indexChunk))
	for i := range q {
		q[i] = buildValuesText(`INSERT INTO messages_fts (docid, body, readers) SELECT column1, column2, column3 FROM (VALUES `,
			`) WHERE EXISTS (SELECT 1 FROM messages WHERE id = column1)`, 3, 1<<i, 0)
	}
	return q
}()

// readerTokens is the readers column of a message's index entry: "§" and
// the ID of each agent it is delivered to.
func readerTokens(deliveries []hub.Delivery) string {
	var b strings.Builder
	for i, d := range deliveries {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(readerToken(d.AgentID))
	}
	return b.String()
}

// readerToken is the index token of the agent id among a message's readers.
func readerToken(id int64) string { return "§" + strconv.FormatInt(id, 10) }

const messageColumns = `m.id, m.sender, m.recipients, m.channel, m.body, m.mentions, m.reply_to, m.kind, m.created_at, m.priority, m.ack_required, m.project, m.sender_kind`

func scanMessage(s row.Scanner, extra ...any) (*hub.Message, error) {
	var m hub.Message
	var to, mentions string
	var created int64
	dest := append([]any{&m.ID, &m.From, &to, &m.Channel, &m.Body, &mentions, &m.ReplyTo, &m.Kind, &created, &m.Priority, &m.AckRequired, &m.Project, &m.SenderKind}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	m.To, m.Mentions, m.CreatedAt = splitNames(to), splitNames(mentions), row.Time(created)
	return &m, nil
}

// MessageByID implements hub.MessageTx.
func (t *Tx) MessageByID(id int64) (*hub.Message, error) {
	m, err := scanMessage(t.queryRow(`SELECT `+messageColumns+` FROM messages m WHERE m.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hub.NoMessage(id)
	}
	return m, err
}

// Inbox implements hub.MessageTx.
func (t *Tx) Inbox(agentID int64, q hub.InboxQuery) ([]*hub.Message, error) {
	sqlq := `SELECT ` + messageColumns + `, d.mention, d.delivered_at <> 0, d.in_context_at <> 0 FROM deliveries d JOIN messages m ON m.id = d.message_id
		WHERE d.agent_id = ? AND d.message_id > ?`
	args := []any{agentID, q.After}
	if q.Channel != "" {
		sqlq += ` AND m.channel = ?`
		args = append(args, q.Channel)
	}
	sqlq += ` ORDER BY d.message_id LIMIT ?`
	args = append(args, q.Limit)
	rows, err := t.query(sqlq, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*hub.Message
	for rows.Next() {
		var mention, delivered, inContext bool
		m, err := scanMessage(rows, &mention, &delivered, &inContext)
		if err != nil {
			return nil, err
		}
		m.MentionsYou, m.Delivered, m.InContext = mention, delivered, inContext
		m.Unread = m.ID > q.ReadUpTo
		out = append(out, m)
	}
	return out, rows.Err()
}

// InboxCounts implements hub.MessageTx. For the agent's own read cursor,
// which is what every reply that reports a count passes, it reads the
// counters the triggers of inbox_counts keep (0004_inbox_counts.sql), so
// its cost does not grow with the backlog; for another cursor it counts
// the deliveries above that cursor.
func (t *Tx) InboxCounts(agentID, after int64) (unread, mentions, latest int64, err error) {
	var readUpTo int64
	err = t.queryRow(`SELECT a.read_up_to, c.unread, c.mentions, c.latest FROM agents a JOIN inbox_counts c ON c.agent_id = a.id
		WHERE a.id = ?`, agentID).Scan(&readUpTo, &unread, &mentions, &latest)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, 0, nil // no such agent: nothing delivered
	}
	if err != nil || after == readUpTo {
		return unread, mentions, latest, err
	}
	err = t.queryRow(`SELECT COUNT(*), COALESCE(SUM(mention), 0) FROM deliveries WHERE agent_id = ? AND message_id > ?`,
		agentID, after).Scan(&unread, &mentions)
	return unread, mentions, latest, err
}

// ListMessages implements hub.MessageTx.
func (t *Tx) ListMessages(q hub.MessageQuery) ([]*hub.Message, error) {
	sqlq := `SELECT ` + messageColumns + ` FROM messages m WHERE m.id > ?`
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
	if q.Newest {
		sqlq = `SELECT * FROM (` + sqlq + ` ORDER BY m.id DESC LIMIT ?) ORDER BY id`
	} else {
		sqlq += ` ORDER BY m.id LIMIT ?`
	}
	args = append(args, q.Limit)
	return t.queryMessages(sqlq, args...)
}

// queryMessages runs a query of messageColumns and returns its messages.
func (t *Tx) queryMessages(q string, args ...any) ([]*hub.Message, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*hub.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// EnsureChannel implements hub.MessageTx.
func (t *Tx) EnsureChannel(project, name string, now time.Time) (int64, error) {
	if _, err := t.exec(`INSERT INTO channels (project, name, created_at) VALUES (?, ?, ?) ON CONFLICT(project, name) DO NOTHING`,
		project, name, row.Nanos(now)); err != nil {
		return 0, err
	}
	return t.ChannelByName(project, name)
}

// JoinChannel implements hub.MessageTx.
func (t *Tx) JoinChannel(channelID, agentID int64, now time.Time) error {
	_, err := t.exec(`INSERT INTO channel_members (channel_id, agent_id, joined_at) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`, channelID, agentID, row.Nanos(now))
	return err
}

// messageShared are the columns of InsertMessages that a batch of nudges
// has the same in every row (execRowsShared): all but the recipients,
// body and mentions.
const messageShared = 1<<0 | 1<<2 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11

// InsertMessages implements hub.MessageTx: a statement inserts up to
// valuesChunk messages, which get consecutive IDs in order (AUTOINCREMENT
// gives each new row one more than the largest ID ever used, and the rows
// of one statement are inserted one after the other); then their
// deliveries.
func (t *Tx) InsertMessages(ms []*hub.Message, ds [][]hub.Delivery) error {
	args := make([]any, 0, 12*len(ms))
	for _, m := range ms {
		row.NormalPriority(m)
		args = append(args, m.From, joinNames(m.To), m.Channel, m.Body, joinNames(m.Mentions), m.ReplyTo, m.Kind, row.Nanos(m.CreatedAt), m.Priority, m.AckRequired, hub.ProjectOr(m.Project), string(m.SenderKind))
	}
	err := t.execRowsShared("insert messages", `INSERT INTO messages (sender, recipients, channel, body, mentions, reply_to, kind, created_at, priority, ack_required, project, sender_kind) VALUES `,
		``, 12, messageShared, args, func(first, n int, res sql.Result) error {
			last, err := res.LastInsertId()
			if err != nil {
				return err
			}
			if got, err := res.RowsAffected(); err != nil || got != int64(n) {
				return fmt.Errorf("%d of %d rows inserted (%v)", got, n, err)
			}
			for i := range n {
				ms[first+i].ID = last - int64(n-1-i)
			}
			return nil
		})
	if err != nil {
		return err
	}
	dargs := make([]any, 0, 4*len(ms))
	for i, m := range ms {
		for _, d := range ds[i] {
			dargs = append(dargs, d.AgentID, m.ID, d.Mention, m.AckRequired)
		}
	}
	if err := t.execRowsShared("insert deliveries", `INSERT INTO deliveries (agent_id, message_id, mention, ack_required) VALUES `, ``, 4, 1<<2|1<<3, dargs, nil); err != nil {
		return err
	}
	for i, m := range ms {
		t.Changes.Delivered(ds[i])
		t.indexMessage(m, ds[i])
	}
	return nil
}
