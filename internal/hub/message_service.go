package hub

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Messages is the service of messages and channels: posting, listing,
// reading, searching.
type Messages struct {
	*core
	store    txs[messagesTx] // the store methods it uses
	receipts replyMarker     // a read marks what it hands out delivered
}

// messagesTx is what the messages service reads and writes in one transaction:
// the store methods it uses, by their group.
type messagesTx interface {
	// AgentTx
	AddresseeByName(name string) (Addressee, error)
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	ListAgents(includeDisabled bool) ([]*Agent, error)
	SetReadCursor(agentID, upTo int64) error
	// MessageTx
	ChannelByName(project, name string) (int64, error)
	ChannelMemberNames(channelID int64) ([]string, error)
	ChannelMembers(channelID int64) ([]int64, error)
	DeleteChannelMember(channelID, agentID int64) error
	EnsureChannel(project, name string, now time.Time) (int64, error)
	Inbox(agentID int64, q InboxQuery) ([]*Message, error)
	InboxCounts(agentID, after int64) (unread, mentions, latest int64, err error)
	InsertChannelMember(channelID, agentID int64, now time.Time) error
	InsertMessage(m *Message, deliveries []Delivery) error
	ListChannels(agentID int64) ([]ChannelSummary, error)
	ListMessages(q MessageQuery) ([]*Message, error)
	MaxMessageID() (int64, error)
	ReadCursor(agentID int64) (readUpTo, unread, latest int64, err error)
	MessageByID(id int64) (*Message, error)
	// PersonTx
	ActivePerson(name string) (bool, error)
	// ProjectTx
	LinkedProjects(name string) ([]string, error)
	ProjectExists(name string) (bool, error)
	// ReceiptTx
	RecordRead(agentID, upTo int64, at time.Time) error
	// SearchTx
	SearchMessages(q SearchQuery) ([]SearchHit, error)
}

// NewMessages returns the messages' service.
func NewMessages(c *Core, receipts replyMarker) *Messages {
	return &Messages{core: c.core, store: txsOf[messagesTx](c.store), receipts: receipts}
}

// Post posts a message from sender: an agent (the token's), or nil for a
// system sender named by from (SenderAdmin, SenderOrchestrator). Errors:
// EINVALID, ENOTFOUND (unknown recipient or reply_to), EPRECONDITION
// (disabled recipient), EEXHAUSTED (fan-out above the limit).
func (s *Messages) Post(ctx context.Context, sender *Agent, from string, req PostRequest) (*Message, error) {
	if sender != nil {
		from = sender.Name
	} else if req.Person != nil {
		from = req.Person.Name
	}
	if err := s.ValidatePost(&req); err != nil {
		return nil, err
	}
	replyTo, err := ParseMessageID("reply_to", req.ReplyTo)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if sender == nil && req.Project == "" && req.Person != nil && len(req.Person.Projects) == 1 {
		req.Project = req.Person.Projects[0] // a person of one project posts in it
	}
	project := ProjectOr(req.Project)
	if sender != nil {
		project = ProjectOr(sender.Project)
	}
	m := &Message{Project: project, From: from, SenderKind: senderKindOf(sender, from), Body: req.Body, ReplyTo: replyTo, Kind: req.Kind, CreatedAt: now,
		Priority: req.Priority, AckRequired: req.AckRequired}
	// RowLocked: a post writes only its message, deliveries and channel,
	// so replicas on one database may post side by side.
	err = update(RowLocked(ctx), s.store, func(tx messagesTx) error {
		m.To, m.Mentions, m.addressed = nil, nil, nil // route appends; fn may run twice
		return s.Route(tx, sender, m, req, now)
	})
	if err != nil {
		return nil, err
	}
	s.metrics.MessagePosted(ProjectOr(m.Project))
	return m, nil
}

// Unreachable returns the recipients that m, just posted by Post, named
// (to and mentions) and that no live path reaches now, and a line saying
// that it is stored for them, in the language of sender (nil: the hub's);
// none and "" when every one can be reached (reachability.go).
func (s *Messages) Unreachable(sender *Agent, m *Message) ([]Unreachable, string) {
	now := s.clock.Now()
	us := s.unreachableOf(m, now)
	return us, UnreachableNote(us, s.locale(sender), s.cfg.Location, now)
}

// ValidatePost checks req before its write (EINVALID saying what is
// expected) and parses the body's @mentions into it, for Route.
func (s *Messages) ValidatePost(req *PostRequest) error {
	if err := s.checkPost(req); err != nil {
		return err
	}
	req.bodyMentions, req.parsed = ParseMentions(req.Body), true
	return s.checkMentions(req)
}

// checkPost is ValidatePost without parsing the body's @mentions (for
// system messages whose recipients and mentions are given, such as nudges).
func (s *core) checkPost(req *PostRequest) error {
	if req.Kind == "" {
		req.Kind = KindMessage
	}
	var err error
	if req.Priority, err = CheckPriority(req.Priority); err != nil {
		return err
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
		if _, err := ParseChannelRef(req.Channel, DefaultProject); err != nil {
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

// routeTx is what routing a message reads and writes: its recipients,
// their projects, its channel, the message.
type routeTx interface {
	reachTx // the post's reach, read as it is needed (lazyReach)
	// MessageTx
	ChannelByName(project, name string) (int64, error)
	ChannelMembers(channelID int64) ([]int64, error)
	EnsureChannel(project, name string, now time.Time) (int64, error)
	InsertChannelMember(channelID, agentID int64, now time.Time) error
	InsertMessage(m *Message, deliveries []Delivery) error
	MessageByID(id int64) (*Message, error)
	// PersonTx
	ActivePerson(name string) (bool, error)
	// ProjectTx
	ProjectExists(name string) (bool, error)
}

// Route resolves the recipients of m inside tx and inserts it (their
// parked waits wake at the commit: wake.go).
func (s *Messages) Route(tx routeTx, sender *Agent, m *Message, req PostRequest, now time.Time) error {
	reach := &lazyReach{tx: tx, caller: sender, person: req.Person}
	if sender == nil && req.Project == "" && req.Channel == "" && req.Person != nil && len(req.Person.Projects) > 1 {
		var projects []string // of the agents in to: the message's, if one
		for _, name := range dedupe(req.To) {
			if person, err := isPerson(tx, name); err != nil {
				return err
			} else if person {
				continue
			}
			a, err := reach.visibleAgent(name)
			if err != nil {
				return err
			}
			projects = append(projects, ProjectOr(a.Project))
		}
		var err error
		if m.Project, err = req.Person.postProject(projects); err != nil {
			return err
		}
	}
	if sender == nil && !req.Person.Sees(m.Project) {
		return CheckSees(req.Person, m.Project)
	}
	if m.ReplyTo != 0 {
		parent, err := tx.MessageByID(m.ReplyTo)
		ok := err == nil
		if ok {
			ok, err = reach.sees(ProjectOr(parent.Project))
		}
		if ErrorCode(err) == ENOTFOUND || (err == nil && !ok) {
			return Errorf(ENOTFOUND, "reply_to %d: no such message", m.ReplyTo)
		} else if err != nil {
			return err
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
		// People (the operator, named people) read their messages on the
		// dashboard: named in To, delivered to no agent. A person keeps a
		// name an agent of an older hub also holds (principal.go).
		if person, err := isPerson(tx, name); err != nil {
			return err
		} else if person {
			m.To = append(m.To, name)
			continue
		}
		a, err := reach.visibleAgent(name)
		if err != nil {
			return err
		}
		if a.Disabled {
			return Errorf(EPRECONDITION, "agent %q is disabled and cannot receive messages until an admin enables it", name)
		}
		m.To = append(m.To, a.Name)
		if _, ok := deliver[a.ID]; !ok {
			m.addressed = append(m.addressed, addressee{a.ID, a.Name})
		}
		add(a.ID, false)
	}
	if req.Channel != "" {
		chID, err := s.postChannel(tx, reach, m, req.Channel, now)
		if err != nil {
			return err
		}
		members, err := tx.ChannelMembers(chID)
		if err != nil {
			return err
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
		if person, err := isPerson(tx, name); err != nil {
			return err
		} else if person { // @operator, @pat: shown to people, delivered to no agent
			m.Mentions = append(m.Mentions, name)
			continue
		}
		a, err := reach.visibleAgent(name)
		if ErrorCode(err) == ENOTFOUND {
			if explicit[name] {
				return Errorf(ENOTFOUND, "mentions names %q, which is not an agent", name)
			}
			continue
		} else if err != nil {
			return err
		}
		if a.Disabled {
			continue
		}
		m.Mentions = append(m.Mentions, a.Name)
		if sender != nil && a.ID == sender.ID {
			continue // "@me" is text: the sender gets no copy, as in a channel
		}
		if !slices.ContainsFunc(m.addressed, func(d addressee) bool { return d.id == a.ID }) {
			m.addressed = append(m.addressed, addressee{a.ID, a.Name})
		}
		add(a.ID, true)
	}
	if len(order) > s.cfg.MaxFanout {
		return Errorf(EEXHAUSTED, "this message would reach %d agents; the limit is %d per message", len(order), s.cfg.MaxFanout)
	}
	ds := make([]Delivery, 0, len(order))
	for _, id := range order {
		ds = append(ds, Delivery{AgentID: id, Mention: deliver[id]})
	}
	if err := tx.InsertMessage(m, ds); err != nil {
		return err
	}
	return nil
}

// postChannel resolves the channel ref a message is posted to and returns
// its ID; the message takes the channel's project. A channel of the
// sender's own project is created on first use and joined by the sender;
// a linked project's channel must exist and is not joined (project.go).
func (s *Messages) postChannel(tx routeTx, reach *lazyReach, m *Message, ref string, now time.Time) (int64, error) {
	c, err := ParseChannelRef(ref, m.Project)
	if err != nil {
		return 0, err
	}
	m.Channel, m.Project = c.Name, c.Project
	sender := reach.caller
	if sender == nil && !reach.person.Sees(c.Project) {
		return 0, channelNotFound(c)
	}
	if sender == nil || c.Project == ProjectOr(sender.Project) {
		if sender == nil {
			if err := requireProject(tx, c.Project); err != nil {
				return 0, err
			}
		}
		id, err := tx.EnsureChannel(c.Project, c.Name, now)
		if err == nil && sender != nil {
			err = tx.InsertChannelMember(id, sender.ID, now)
		}
		return id, err
	}
	ok, err := reach.sees(c.Project)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, channelNotFound(c)
	}
	id, err := tx.ChannelByName(c.Project, c.Name)
	if ErrorCode(err) == ENOTFOUND {
		return 0, channelNotFound(c)
	}
	return id, err
}

// List returns the caller's messages after a cursor, the next cursor and
// whether more are waiting. Errors: EINVALID.
func (s *Messages) List(ctx context.Context, caller *Agent, req ListRequest) ([]*Message, int64, bool, error) {
	after, limit, err := s.listParams(req.AfterID, req.Limit, req.Channel)
	if err != nil {
		return nil, 0, false, err
	}
	var msgs []*Message
	err = view(ctx, s.store, func(tx messagesTx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		if err := checkCursor(tx, "after_id", after); err != nil {
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
	if err := s.receipts.MarkReply(ctx, caller.ID, msgs, ViaRead); err != nil {
		return nil, 0, false, err
	}
	SortByPriority(msgs)
	return msgs, cursor, more, nil
}

// listParams validates a message list's cursor, size and channel filter
// ("" = any channel). Errors: EINVALID.
func (s *Messages) listParams(afterID string, limit int, channel string) (int64, int, error) {
	after, err := ParseMessageID("after_id", afterID)
	if err != nil {
		return 0, 0, err
	}
	n, err := s.limit(limit, 50)
	if err != nil {
		return 0, 0, err
	}
	if channel != "" {
		if err := ValidateChannel(channel); err != nil {
			return 0, 0, err
		}
	}
	return after, n, nil
}

// limit validates a requested list size: 0 means def, the maximum is s.cfg.MaxListLimit.
func (s *core) limit(n, def int) (int, error) {
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
func (s *Messages) MarkRead(ctx context.Context, caller *Agent, upToID string) (int64, int64, error) {
	upTo, err := ParseMessageID("up_to_id", upToID)
	if err != nil {
		return 0, 0, err
	}
	var unread, cursor int64
	err = update(ctx, s.store, func(tx messagesTx) error {
		var latest int64
		var err error
		cursor, unread, latest, err = tx.ReadCursor(caller.ID)
		if err != nil {
			return err
		}
		// "" means everything delivered so far; a cursor beyond that is
		// clamped, or it would mark messages not yet posted as read.
		if upToID == "" || upTo > latest {
			upTo = latest
		}
		if upTo <= cursor {
			return nil // it never moves back: the counts stand
		}
		cursor = upTo
		if err := tx.SetReadCursor(caller.ID, upTo); err != nil {
			return err
		}
		if err := tx.RecordRead(caller.ID, upTo, s.clock.Now()); err != nil {
			return err
		}
		if upTo == latest {
			unread = 0 // nothing is delivered above the newest delivery
			return nil
		}
		unread, _, _, err = tx.InboxCounts(caller.ID, upTo)
		return err
	})
	return unread, cursor, err
}

// JoinChannel subscribes the caller to a channel, creating it on first use,
// and returns its members. Errors: EINVALID.
func (s *Messages) JoinChannel(ctx context.Context, caller *Agent, channel string) ([]string, error) {
	c, err := ownChannel(caller, channel)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var members []string
	err = update(ctx, s.store, func(tx messagesTx) error {
		id, err := tx.EnsureChannel(c.Project, c.Name, now)
		if err != nil {
			return err
		}
		if err := tx.InsertChannelMember(id, caller.ID, now); err != nil {
			return err
		}
		members, err = tx.ChannelMemberNames(id)
		return err
	})
	return members, err
}

// ownChannel parses a channel the caller joins or leaves: one of its own
// project. Errors: EINVALID, EPERMISSION.
func ownChannel(caller *Agent, channel string) (ChannelRef, error) {
	home := ProjectOr(caller.Project)
	c, err := ParseChannelRef(channel, home)
	if err == nil && !(Reach{Home: home}).Owns(c.Project) {
		err = Errorf(EPERMISSION, "an agent joins and leaves only its own project's channels; post to a linked project's channel as project/#name")
	}
	return c, err
}

// LeaveChannel unsubscribes the caller. Errors: EINVALID, ENOTFOUND.
func (s *Messages) LeaveChannel(ctx context.Context, caller *Agent, channel string) error {
	c, err := ownChannel(caller, channel)
	if err != nil {
		return err
	}
	return update(ctx, s.store, func(tx messagesTx) error {
		id, err := tx.ChannelByName(c.Project, c.Name)
		if err != nil {
			return err
		}
		return tx.DeleteChannelMember(id, caller.ID)
	})
}

// AdminList lists messages for the admin view. Errors: EINVALID, ENOTFOUND.
func (s *Messages) AdminList(ctx context.Context, req AdminListRequest) ([]*Message, int64, bool, error) {
	if req.Project != "" {
		if err := ValidateProjectName(req.Project); err != nil {
			return nil, 0, false, err
		}
	}
	if req.Channel != "" {
		c, err := ParseChannelRef(req.Channel, req.Project)
		if err != nil {
			return nil, 0, false, err
		}
		req.Channel, req.Project = c.Name, c.Project
	}
	if req.Project != "" {
		if err := CheckSees(req.Person, req.Project); err != nil {
			return nil, 0, false, err
		}
	}
	after, limit, err := s.listParams(req.AfterID, req.Limit, req.Channel)
	if err != nil {
		return nil, 0, false, err
	}
	var msgs []*Message
	err = view(ctx, s.store, func(tx messagesTx) error {
		if err := checkCursor(tx, "after_id", after); err != nil {
			return err
		}
		q := MessageQuery{After: after, Project: req.Project, Channel: req.Channel, Limit: limit + 1, Newest: req.Newest}
		if req.Person != nil {
			q.Projects = req.Person.Projects
		}
		if req.Agent != "" {
			a, err := tx.AgentByName(req.Agent)
			if err == nil && !req.Person.Sees(a.Project) {
				err = agentNotFound(req.Agent)
			}
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
	if req.Newest {
		more := len(msgs) > limit
		if more {
			msgs = msgs[len(msgs)-limit:] // one older message was read to set has_more
		}
		if n := fitPageNewest(msgs); n < len(msgs) {
			msgs, more = msgs[len(msgs)-n:], true
		}
		if more {
			return msgs, msgs[len(msgs)-1].ID, true, nil
		}
	}
	msgs, cursor, more := page(msgs, limit, after)
	return msgs, cursor, more, nil
}

// MessageTx stores messages, deliveries, read cursors and channels.
type MessageTx interface {
	// InsertMessage inserts m with its deliveries and sets m.ID.
	InsertMessage(m *Message, deliveries []Delivery) error
	// InsertMessages does InsertMessage(ms[i], ds[i]) for each i, in order
	// (so the IDs it sets increase with i).
	InsertMessages(ms []*Message, ds [][]Delivery) error
	// MessageByID returns one message. ENOTFOUND.
	MessageByID(id int64) (*Message, error)
	// Inbox returns messages delivered to agentID matching q, oldest first.
	Inbox(agentID int64, q InboxQuery) ([]*Message, error)
	// InboxCounts returns the number of messages delivered to agentID with an
	// ID above after, how many of them mention the agent, and the newest
	// delivered message ID (0 if none). Replies pass the agent's own read
	// cursor on every heartbeat, status and mark-read; the SQLite store
	// answers that case from counters kept with the deliveries and the
	// cursor, without counting the backlog.
	InboxCounts(agentID, after int64) (unread, mentions, latest int64, err error)
	// ReadCursor returns the agent's read cursor, and the unread count and
	// newest delivered message ID that InboxCounts gives at it, in one
	// read. ENOTFOUND.
	ReadCursor(agentID int64) (readUpTo, unread, latest int64, err error)
	// LookInbox reads, in one statement when it finds messages, what a
	// wait's look hands out to agentID if it is enabled: as Inbox, the
	// messages after after (fromReadCursor: after the agent's read
	// cursor), Unread by its read cursor; and, when there are none, the
	// newest message delivered to it. A disabled agent reads as Disabled,
	// in the same snapshot as the messages would be: a look that began
	// after the agent's disabling committed hands out nothing. ENOTFOUND.
	LookInbox(agentID, after int64, fromReadCursor bool, limit int) (InboxLook, error)
	// ListMessages returns messages for an admin view, oldest first.
	ListMessages(q MessageQuery) ([]*Message, error)
	// MaxMessageID returns the newest message ID (0 if none).
	MaxMessageID() (int64, error)
	// RecipientsAfter returns the IDs of the agents that received a message
	// with an ID above after (used by the fallback watcher).
	RecipientsAfter(after int64) ([]int64, error)

	// EnsureChannel returns the ID of project's channel named name (with
	// '#'), creating it if needed.
	EnsureChannel(project, name string, now time.Time) (int64, error)
	// ChannelByName returns the ID of project's channel named name. ENOTFOUND.
	ChannelByName(project, name string) (int64, error)
	// InsertChannelMember adds an agent to a channel (no-op if already a member).
	InsertChannelMember(channelID, agentID int64, now time.Time) error
	// DeleteChannelMember removes an agent from a channel (no-op if not a member).
	DeleteChannelMember(channelID, agentID int64) error
	// ChannelMembers returns the member agents' IDs.
	ChannelMembers(channelID int64) ([]int64, error)
	// ChannelMemberNames returns the member agents' names, sorted.
	ChannelMemberNames(channelID int64) ([]string, error)
	// ListChannels returns every channel by project and name with its
	// member count and whether agentID is a member.
	ListChannels(agentID int64) ([]ChannelSummary, error)
}

// maxMessageIDTx reads the newest message ID.
type maxMessageIDTx interface {
	MaxMessageID() (int64, error)
}

// checkCursor refuses a cursor beyond the newest message: a client that
// passed one would silently miss every message up to it.
func checkCursor(tx maxMessageIDTx, field string, after int64) error {
	if after == 0 {
		return nil
	}
	newest, err := tx.MaxMessageID()
	if err != nil {
		return err
	}
	if after > newest {
		return Errorf(EINVALID, "%s %d is beyond the newest message (%d): pass the cursor of an earlier reply, or leave %s empty", field, after, newest, field)
	}
	return nil
}

// checkMentions refuses a post whose body and mentions name more distinct
// agents than the limit. It runs before the write transaction.
func (s *Messages) checkMentions(req *PostRequest) error {
	limit := s.cfg.MaxMentions
	if limit <= 0 {
		limit = DefaultMaxMentions
	}
	if n := len(dedupe(append(append([]string(nil), req.Mentions...), req.bodyMentions...))); n > limit {
		return Errorf(EINVALID, "the message mentions %d distinct @names; the limit is %d per message: post to a channel to reach many agents", n, limit)
	}
	return nil
}
