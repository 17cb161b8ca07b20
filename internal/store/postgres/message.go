package postgres

import (
	"strconv"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.MessageTx and hub.MetaTx.
//
// Message IDs are the waiters' cursors, so a message must never become
// visible after a message with a higher ID: a reader that saw the higher
// one has moved its cursor past the lower one for good. A sequence cannot
// promise that (nextval hands out 100 to replica B and 101 to replica A,
// and A may commit first). So the posting transaction takes its IDs from
// the one-row counter message_ids: the UPDATE holds the row's lock until
// the transaction ends, a second poster waits on it and then reads the
// committed value. IDs are therefore handed out in commit order, and by
// the time a poster can take ID n+1 the transaction of ID n is visible to
// every new snapshot (PostgreSQL releases a transaction's row locks only
// after making its commit visible). A rolled-back post gives its IDs back,
// so IDs have no gaps; they are never reused, because the counter only
// moves up. Posts take the write lock in shared mode only (commit.go), so
// the counter is what serialises them across replicas: from the first ID a
// transaction takes to its commit.
//
// The same transaction NOTIFYs the replicas' listeners with the IDs and
// the recipients of the messages it wrote (postedPayload), so that a
// listening replica wakes exactly those waits without reading the store
// (hub.Service.PostedTo). PostgreSQL delivers the notification at commit,
// in commit order, and never for a rolled-back post (or savepoint).

// nextMessageIDs reserves n consecutive message IDs and returns the first.
func (t *Tx) nextMessageIDs(n int) (int64, error) {
	var last int64
	if err := t.queryRowAs(sharedSafe, `UPDATE message_ids SET last_id = last_id + $1 RETURNING last_id`, n).Scan(&last); err != nil {
		return 0, err
	}
	return last - int64(n) + 1, nil
}

// maxPayload is the longest NOTIFY payload PostgreSQL takes (it must be
// shorter than 8,000 bytes).
const maxPayload = 7999

// postedPayload is the payload of the notification of messages first to
// last delivered to agents: "FIRST-LAST:AGENT,AGENT,…" (each agent once,
// none for messages without recipients), or "FIRST-LAST" when the
// recipients do not fit in maxPayload (a post to a large channel): the
// listeners then look for them in the store.
func postedPayload(first, last int64, agents []int64) string {
	b := make([]byte, 0, 64)
	b = strconv.AppendInt(b, first, 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, last, 10)
	ids := b
	b = append(b, ':')
	seen := make(map[int64]bool, len(agents))
	for _, a := range agents {
		if seen[a] {
			continue
		}
		seen[a] = true
		if len(seen) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, a, 10)
		if len(b) > maxPayload {
			return string(ids)
		}
	}
	return string(b)
}

// parsePosted reads a payload of postedPayload. known is false when the
// payload names no recipients (they did not fit, or it is not one of
// postedPayload's, such as a bare ID from an older replica): the listener
// must then look for them in the store.
func parsePosted(payload string) (first, last int64, agents []int64, known bool) {
	span, list, hasList := strings.Cut(payload, ":")
	from, to, ok := strings.Cut(span, "-")
	if !ok || !hasList {
		return 0, 0, nil, false
	}
	var err1, err2 error
	first, err1 = strconv.ParseInt(from, 10, 64)
	last, err2 = strconv.ParseInt(to, 10, 64)
	if err1 != nil || err2 != nil || first < 1 || last < first {
		return 0, 0, nil, false
	}
	if list == "" {
		return first, last, nil, true
	}
	agents = make([]int64, 0, strings.Count(list, ",")+1)
	for s := range strings.SplitSeq(list, ",") {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, nil, false
		}
		agents = append(agents, id)
	}
	return first, last, agents, true
}

// InsertMessage implements hub.MessageTx.
func (t *Tx) InsertMessage(m *hub.Message, deliveries []hub.Delivery) error {
	return t.InsertMessages([]*hub.Message{m}, [][]hub.Delivery{deliveries})
}

// InsertMessages implements hub.MessageTx: the messages get consecutive IDs
// in order, and the messages and their deliveries go in one statement each.
//
// Under the shared write lock the messages are only recorded here and
// written at the end of the batch, all of the batch's posts at once
// (flushPosts): the counter row's lock, which serialises posts across
// replicas, is then held from that one insert to the commit, not while the
// batch's other writes run, so that the replicas' batches overlap.
func (t *Tx) InsertMessages(ms []*hub.Message, ds [][]hub.Delivery) error {
	for _, d := range ds {
		t.Changes.Delivered(d)
	}
	if t.shared {
		t.pending = append(t.pending, pendingPost{ms, ds})
		return nil
	}
	return t.insertMessages(ms, ds)
}

// pendingPost is a post recorded under the shared write lock, written by
// flushPosts.
type pendingPost struct {
	ms []*hub.Message
	ds [][]hub.Delivery
}

// flushPosts writes the posts of the batch's committed writes.
func (t *Tx) flushPosts() error {
	var ms []*hub.Message
	var ds [][]hub.Delivery
	for _, p := range t.posts {
		ms, ds = append(ms, p.ms...), append(ds, p.ds...)
	}
	return t.insertMessages(ms, ds)
}

// insertMessages writes messages and their deliveries now.
func (t *Tx) insertMessages(ms []*hub.Message, ds [][]hub.Delivery) error {
	if len(ms) == 0 {
		return nil
	}
	first, err := t.nextMessageIDs(len(ms))
	if err != nil {
		return err
	}
	n := len(ms)
	var (
		ids, replyTo, created []int64
		senders, channels     = make([]string, 0, n), make([]string, 0, n)
		projects              = make([]string, 0, n)
		bodies, kinds         = make([]string, 0, n), make([]string, 0, n)
		senderKinds           = make([]string, 0, n)
		to, mentions          = make([]string, 0, n), make([]string, 0, n)
		dAgent, dMsg          []int64
		dMention, dAck        []bool
		prios                 = make([]int32, 0, n)
		acks                  = make([]bool, 0, n)
	)
	for i, m := range ms {
		m.ID = first + int64(i)
		row.NormalPriority(m)
		prios, acks = append(prios, int32(m.Priority)), append(acks, m.AckRequired)
		ids, replyTo, created = append(ids, m.ID), append(replyTo, m.ReplyTo), append(created, row.Nanos(m.CreatedAt))
		senders, channels = append(senders, m.From), append(channels, m.Channel)
		projects = append(projects, hub.ProjectOr(m.Project))
		bodies, kinds = append(bodies, m.Body), append(kinds, m.Kind)
		senderKinds = append(senderKinds, string(m.SenderKind))
		to, mentions = append(to, arrayLiteral(m.To)), append(mentions, arrayLiteral(m.Mentions))
		for _, d := range ds[i] {
			dAgent, dMsg, dMention = append(dAgent, d.AgentID), append(dMsg, m.ID), append(dMention, d.Mention)
			dAck = append(dAck, m.AckRequired)
		}
	}
	if _, err := t.execAs(sharedSafe, `INSERT INTO messages (id, sender, recipients, channel, body, mentions, reply_to, kind, created_at, priority, ack_required, project, sender_kind)
		SELECT id, sender, recipients::text[], channel, body, mentions::text[], reply_to, kind, created_at, priority, ack_required, project, sender_kind
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::bigint[], $10::integer[], $11::boolean[], $12::text[], $13::text[])
			AS v(id, sender, recipients, channel, body, mentions, reply_to, kind, created_at, priority, ack_required, project, sender_kind)`,
		ids, senders, to, channels, bodies, mentions, replyTo, kinds, created, prios, acks, projects, senderKinds); err != nil {
		return err
	}
	if len(dAgent) > 0 {
		if _, err := t.execAs(sharedSafe, `INSERT INTO deliveries (agent_id, message_id, mention, ack_required)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::boolean[], $4::boolean[])`, dAgent, dMsg, dMention, dAck); err != nil {
			return err
		}
	}
	_, err = t.exec(`SELECT pg_notify($1, $2)`, t.db.channel, postedPayload(first, first+int64(n)-1, dAgent))
	return err
}

// arrayLiteral writes names as a PostgreSQL array literal, for the
// arrays of arrays that unnest cannot take (it flattens them).
func arrayLiteral(names []string) string {
	b := []byte{'{'}
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for _, c := range []byte(n) {
			if c == '"' || c == '\\' {
				b = append(b, '\\')
			}
			b = append(b, c)
		}
		b = append(b, '"')
	}
	return string(append(b, '}'))
}

// EnsureChannel implements hub.MessageTx.
func (t *Tx) EnsureChannel(project, name string, now time.Time) (int64, error) {
	if _, err := t.execAs(sharedSafe, `INSERT INTO channels (project, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (project, name) DO NOTHING`,
		project, name, row.Nanos(now)); err != nil {
		return 0, err
	}
	return t.ChannelByName(project, name)
}

// InsertChannelMember implements hub.MessageTx.
func (t *Tx) InsertChannelMember(channelID, agentID int64, now time.Time) error {
	_, err := t.execAs(sharedSafe, `INSERT INTO channel_members (channel_id, agent_id, joined_at) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, channelID, agentID, row.Nanos(now))
	return err
}
