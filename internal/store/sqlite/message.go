package sqlite

import (
	"database/sql/driver"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

func joinNames(ns []string) string { return strings.Join(ns, ",") }

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

// EnsureChannel implements hub.MessageTx.
func (t *Tx) EnsureChannel(project, name string, now time.Time) (int64, error) {
	if _, err := t.exec(`INSERT INTO channels (project, name, created_at) VALUES (?, ?, ?) ON CONFLICT(project, name) DO NOTHING`,
		project, name, row.Nanos(now)); err != nil {
		return 0, err
	}
	return t.ChannelByName(project, name)
}

// InsertChannelMember implements hub.MessageTx.
func (t *Tx) InsertChannelMember(channelID, agentID int64, now time.Time) error {
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
		``, 12, messageShared, args, func(first, n int, res driver.Result) error {
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
