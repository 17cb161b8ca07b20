package hub

import (
	"context"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Message kinds.
const (
	KindMessage   = "message"
	KindNudge     = "nudge"
	KindHeartbeat = "heartbeat" // a heartbeat pulse
	KindCron      = "cron"
	KindSystem    = "system"
)

// Message is one message. Unread and MentionsYou are relative to the reader
// and filled only by Inbox.
type Message struct {
	ID        int64
	From      string
	To        []string
	Channel   string
	Body      string
	Mentions  []string
	ReplyTo   int64
	Kind      string
	CreatedAt time.Time

	Unread      bool
	MentionsYou bool
}

// Delivery puts a message in one agent's inbox.
type Delivery struct {
	AgentID int64
	Mention bool
}

// InboxQuery selects messages from one agent's inbox.
type InboxQuery struct {
	After    int64  // only IDs above this
	Channel  string // only this channel, if set
	Limit    int    // at most this many (> 0)
	ReadUpTo int64  // the reader's cursor, to fill Message.Unread
}

// MessageQuery selects messages for the admin view.
type MessageQuery struct {
	After   int64
	AgentID int64  // only delivered to this agent, if > 0
	Channel string // only this channel, if set
	Limit   int
}

var (
	channelRE = regexp.MustCompile(`^#[a-z0-9][a-z0-9._-]{0,62}$`)
	// mentionRE finds @name not preceded by a word character (so e-mail
	// addresses are not mentions).
	mentionRE = regexp.MustCompile(`(?:^|[^\w@])@([a-z0-9][a-z0-9._-]{0,62})`)
)

// ValidateChannel returns EINVALID unless name is a channel name such as "#ops".
func ValidateChannel(name string) error {
	if !channelRE.MatchString(name) {
		return Errorf(EINVALID, "channel %q is invalid: expected '#' followed by 1-63 characters of a-z, 0-9, '.', '_' or '-' (for example \"#general\")", name)
	}
	return nil
}

// ParseMentions returns the agent names mentioned as @name in body, in order
// of first appearance, without duplicates. Trailing dots are not part of a
// name ("ask @bob." mentions bob).
func ParseMentions(body string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range mentionRE.FindAllStringSubmatch(body, -1) {
		name := strings.TrimRight(m[1], ".")
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

// ParseMessageID parses a message ID or cursor; "" is 0. Errors: EINVALID.
func ParseMessageID(field, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 {
		return 0, Errorf(EINVALID, "%s %q is not a message ID: expected a decimal number such as \"42\" (the id or cursor of an earlier reply)", field, s)
	}
	return id, nil
}

// FormatMessageID formats a message ID or cursor; 0 is "".
func FormatMessageID(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

// PostRequest is the input of Service.Post.
type PostRequest struct {
	To       []string
	Channel  string
	Body     string
	ReplyTo  string
	Mentions []string
	Kind     string // KindMessage if empty

	// bodyMentions are the @names of Body, parsed by validatePost outside
	// the write transaction (parsing a large body must not hold the writer).
	bodyMentions []string
	parsed       bool
}

// Post posts a message from sender: an agent (the token's), or nil for a
// system sender named by from (SenderAdmin, SenderOrchestrator). Errors:
// EINVALID, ENOTFOUND (unknown recipient or reply_to), EPRECONDITION
// (disabled recipient), EEXHAUSTED (fan-out above the limit).
func (s *Service) Post(ctx context.Context, sender *Agent, from string, req PostRequest) (*Message, error) {
	if sender != nil {
		from = sender.Name
	}
	if err := s.validatePost(&req); err != nil {
		return nil, err
	}
	replyTo, err := ParseMessageID("reply_to", req.ReplyTo)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	m := &Message{From: from, Channel: req.Channel, Body: req.Body, ReplyTo: replyTo, Kind: req.Kind, CreatedAt: now}
	var recipients []int64
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		recipients, err = s.route(tx, sender, m, req, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.waiters.Notify(recipients...)
	s.metrics.MessagePosted()
	return m, nil
}

func (s *Service) validatePost(req *PostRequest) error {
	if err := s.checkPost(req); err != nil {
		return err
	}
	req.bodyMentions, req.parsed = ParseMentions(req.Body), true
	return nil
}

// checkPost is validatePost without parsing the body's @mentions (for
// system messages whose recipients and mentions are given, such as nudges).
func (s *Service) checkPost(req *PostRequest) error {
	if req.Kind == "" {
		req.Kind = KindMessage
	}
	if strings.TrimSpace(req.Body) == "" {
		return Errorf(EINVALID, "body is empty: write the message text in body")
	}
	if !utf8.ValidString(req.Body) {
		return Errorf(EINVALID, "body must be valid UTF-8")
	}
	if len(req.Body) > s.cfg.MaxBodyBytes {
		return Errorf(EINVALID, "body is %d bytes; the limit is %d bytes: split the message or send a reference", len(req.Body), s.cfg.MaxBodyBytes)
	}
	if len(req.To) == 0 && req.Channel == "" {
		return Errorf(EINVALID, "no recipient: give agent names in to and/or a channel such as \"#general\"")
	}
	if req.Channel != "" {
		if err := ValidateChannel(req.Channel); err != nil {
			return err
		}
	}
	if len(req.To) > s.cfg.MaxFanout {
		return Errorf(EEXHAUSTED, "to names %d agents; the limit is %d per message: post to a channel instead", len(req.To), s.cfg.MaxFanout)
	}
	for _, n := range append(append([]string(nil), req.To...), req.Mentions...) {
		if err := ValidateAgentName(n); err != nil {
			return err
		}
	}
	return nil
}

// route resolves the recipients of m inside tx, inserts it and returns the
// IDs of the agents to wake.
func (s *Service) route(tx Tx, sender *Agent, m *Message, req PostRequest, now time.Time) ([]int64, error) {
	if m.ReplyTo != 0 {
		if _, err := tx.MessageByID(m.ReplyTo); err != nil {
			if ErrorCode(err) == ENOTFOUND {
				return nil, Errorf(ENOTFOUND, "reply_to %d: no such message", m.ReplyTo)
			}
			return nil, err
		}
	}
	deliver := map[int64]bool{} // agent ID → mentioned
	order := []int64{}
	add := func(id int64, mention bool) {
		if _, ok := deliver[id]; !ok {
			order = append(order, id)
		}
		deliver[id] = deliver[id] || mention
	}
	for _, name := range dedupe(req.To) {
		a, err := tx.AgentByName(name)
		if err != nil {
			if ErrorCode(err) == ENOTFOUND {
				return nil, Errorf(ENOTFOUND, "no agent named %q: check the name with `hubctl agent list`", name)
			}
			return nil, err
		}
		if a.Disabled() {
			return nil, Errorf(EPRECONDITION, "agent %q is disabled and cannot receive messages; enable it with `hubctl agent enable %s`", name, name)
		}
		m.To = append(m.To, a.Name)
		add(a.ID, false)
	}
	if m.Channel != "" {
		chID, err := tx.EnsureChannel(m.Channel, now)
		if err != nil {
			return nil, err
		}
		if sender != nil {
			if err := tx.JoinChannel(chID, sender.ID, now); err != nil {
				return nil, err
			}
		}
		members, err := tx.ChannelMembers(chID)
		if err != nil {
			return nil, err
		}
		for _, id := range members {
			if sender == nil || id != sender.ID {
				add(id, false)
			}
		}
	}
	// Explicit mentions must name agents; @names in the body that are not
	// agents are ordinary text.
	explicit := map[string]bool{}
	for _, n := range req.Mentions {
		explicit[n] = true
	}
	if !req.parsed {
		req.bodyMentions = ParseMentions(m.Body)
	}
	for _, name := range dedupe(append(append([]string(nil), req.Mentions...), req.bodyMentions...)) {
		a, err := tx.AgentByName(name)
		if ErrorCode(err) == ENOTFOUND {
			if explicit[name] {
				return nil, Errorf(ENOTFOUND, "mentions names %q, which is not an agent", name)
			}
			continue
		} else if err != nil {
			return nil, err
		}
		if a.Disabled() {
			continue
		}
		m.Mentions = append(m.Mentions, a.Name)
		if sender != nil && a.ID == sender.ID {
			continue // "@me" is text: the sender gets no copy, as in a channel
		}
		add(a.ID, true)
	}
	if len(order) > s.cfg.MaxFanout {
		return nil, Errorf(EEXHAUSTED, "this message would reach %d agents; the limit is %d per message", len(order), s.cfg.MaxFanout)
	}
	ds := make([]Delivery, 0, len(order))
	for _, id := range order {
		ds = append(ds, Delivery{AgentID: id, Mention: deliver[id]})
	}
	if err := tx.InsertMessage(m, ds); err != nil {
		return nil, err
	}
	return order, nil
}

func dedupe(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// ListRequest is the input of Service.List.
type ListRequest struct {
	AfterID    string
	UnreadOnly bool
	Limit      int
	Channel    string
}

// List returns the caller's messages after a cursor, the next cursor and
// whether more are waiting. Errors: EINVALID.
func (s *Service) List(ctx context.Context, caller *Agent, req ListRequest) ([]*Message, int64, bool, error) {
	after, err := ParseMessageID("after_id", req.AfterID)
	if err != nil {
		return nil, 0, false, err
	}
	limit, err := s.limit(req.Limit, 50)
	if err != nil {
		return nil, 0, false, err
	}
	if req.Channel != "" {
		if err := ValidateChannel(req.Channel); err != nil {
			return nil, 0, false, err
		}
	}
	var msgs []*Message
	err = s.store.View(ctx, func(tx Tx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		if req.UnreadOnly && a.ReadUpTo > after {
			after = a.ReadUpTo
		}
		msgs, err = tx.Inbox(caller.ID, InboxQuery{After: after, Channel: req.Channel, Limit: limit + 1, ReadUpTo: a.ReadUpTo})
		return err
	})
	if err != nil {
		return nil, 0, false, err
	}
	msgs, cursor, more := page(msgs, limit, after)
	return msgs, cursor, more, nil
}

// limit validates a requested list size: 0 means def, the maximum is s.cfg.MaxListLimit.
func (s *Service) limit(n, def int) (int, error) {
	switch {
	case n < 0:
		return 0, Errorf(EINVALID, "limit %d is negative: give 1-%d, or 0 for the default (%d)", n, s.cfg.MaxListLimit, def)
	case n == 0:
		return min(def, s.cfg.MaxListLimit), nil
	case n > s.cfg.MaxListLimit:
		return s.cfg.MaxListLimit, nil
	}
	return n, nil
}

// MarkRead moves the caller's read cursor up to upToID ("" = everything
// delivered so far); it never moves back. It returns the unread count left
// and the cursor. Errors: EINVALID.
func (s *Service) MarkRead(ctx context.Context, caller *Agent, upToID string) (int64, int64, error) {
	upTo, err := ParseMessageID("up_to_id", upToID)
	if err != nil {
		return 0, 0, err
	}
	var unread, cursor int64
	err = s.store.Update(ctx, func(tx Tx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		_, _, latest, err := tx.InboxCounts(a.ID, a.ReadUpTo)
		if err != nil {
			return err
		}
		// "" means everything delivered so far; a cursor beyond that is
		// clamped, or it would mark messages not yet posted as read.
		if upToID == "" || upTo > latest {
			upTo = latest
		}
		if upTo > a.ReadUpTo {
			a.ReadUpTo = upTo
			if err := tx.UpdateAgent(a); err != nil {
				return err
			}
		}
		cursor = a.ReadUpTo
		unread, _, _, err = tx.InboxCounts(a.ID, a.ReadUpTo)
		return err
	})
	return unread, cursor, err
}

// JoinChannel subscribes the caller to a channel, creating it on first use,
// and returns its members. Errors: EINVALID.
func (s *Service) JoinChannel(ctx context.Context, caller *Agent, channel string) ([]string, error) {
	if err := ValidateChannel(channel); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var members []string
	err := s.store.Update(ctx, func(tx Tx) error {
		id, err := tx.EnsureChannel(channel, now)
		if err != nil {
			return err
		}
		if err := tx.JoinChannel(id, caller.ID, now); err != nil {
			return err
		}
		members, err = tx.ChannelMemberNames(id)
		return err
	})
	return members, err
}

// LeaveChannel unsubscribes the caller. Errors: EINVALID, ENOTFOUND.
func (s *Service) LeaveChannel(ctx context.Context, caller *Agent, channel string) error {
	if err := ValidateChannel(channel); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx Tx) error {
		id, err := tx.ChannelByName(channel)
		if err != nil {
			return err
		}
		return tx.LeaveChannel(id, caller.ID)
	})
}

// AdminListRequest is the input of Service.AdminList.
type AdminListRequest struct {
	AfterID string
	Limit   int
	Agent   string
	Channel string
}

// AdminList lists messages for the admin view. Errors: EINVALID, ENOTFOUND.
func (s *Service) AdminList(ctx context.Context, req AdminListRequest) ([]*Message, int64, bool, error) {
	after, err := ParseMessageID("after_id", req.AfterID)
	if err != nil {
		return nil, 0, false, err
	}
	limit, err := s.limit(req.Limit, 50)
	if err != nil {
		return nil, 0, false, err
	}
	if req.Channel != "" {
		if err := ValidateChannel(req.Channel); err != nil {
			return nil, 0, false, err
		}
	}
	var msgs []*Message
	err = s.store.View(ctx, func(tx Tx) error {
		q := MessageQuery{After: after, Channel: req.Channel, Limit: limit + 1}
		if req.Agent != "" {
			a, err := tx.AgentByName(req.Agent)
			if err != nil {
				return err
			}
			q.AgentID = a.ID
		}
		msgs, err = tx.ListMessages(q)
		return err
	})
	if err != nil {
		return nil, 0, false, err
	}
	msgs, cursor, more := page(msgs, limit, after)
	return msgs, cursor, more, nil
}

// sortedNames returns names sorted (for stable output).
func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// page trims msgs, read with limit+1, to limit and returns the cursor to
// hand back (the last message's ID, or after when there is none) and
// whether more messages follow.
func page(msgs []*Message, limit int, after int64) ([]*Message, int64, bool) {
	more := len(msgs) > limit
	if more {
		msgs = msgs[:limit]
	}
	cursor := after
	if len(msgs) > 0 {
		cursor = msgs[len(msgs)-1].ID
	}
	return msgs, cursor, more
}
