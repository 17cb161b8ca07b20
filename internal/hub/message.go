package hub

import (
	"strconv"
	"strings"
	"time"
)

// Message kinds.
const (
	KindMessage   = "message"
	KindNudge     = "nudge"
	KindHeartbeat = "heartbeat" // a heartbeat pulse
	KindCron      = "cron"
	KindSystem    = "system"
)

// Message is one message. Unread, MentionsYou and Delivered are relative to
// the reader and filled only by Inbox.
type Message struct {
	ID      int64
	Project string // the channel's project, else the sender's (the recipient's for the hub's own messages)
	From    string
	// SenderKind is the kind of principal From names, written with the
	// message (principal.go).
	SenderKind SenderKind
	To         []string
	Channel    string
	Body       string
	Mentions   []string
	ReplyTo    int64
	Kind       string
	CreatedAt  time.Time
	Priority   Priority // never zero once stored
	// AckRequired: each recipient is asked to acknowledge it.
	AckRequired bool

	Unread      bool
	MentionsYou bool
	// Delivered (filled by Inbox): it already left the hub for the reader
	// in an earlier reply, so this one is not its first delivery.
	Delivered bool
	// InContext (filled by Inbox): it already reached the reader's context
	// (receipt.go).
	InContext bool

	// addressed are the recipients a post named (to and mentions), for its
	// reply (Messages.Unreachable); set by route.
	addressed []addressee
}

// addressee is a recipient a post named (to, or a mention): whom its reply
// says no live path reaches.
type addressee struct {
	id   int64
	name string
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

// InboxLook is what one look of a wait or a stream reads of an agent's
// inbox (MessageTx.LookInbox). An agent disabled reads as Disabled alone:
// nothing of its inbox is read.
type InboxLook struct {
	Disabled bool
	From     int64      // the cursor the messages follow
	Messages []*Message // delivered after From, oldest first, at most the limit
	Latest   int64      // without Messages: the newest message delivered to the agent (0 if none)
}

// MessageQuery selects messages for the admin view.
type MessageQuery struct {
	After   int64
	Project string // only this project's messages, if set
	// Projects keeps the messages of these projects, if any (a person's).
	Projects []string
	AgentID  int64  // only delivered to this agent, if > 0
	Channel  string // only this channel, if set
	Limit    int
	Newest   bool // the newest Limit messages after After (still oldest first)
}

// ValidateChannel returns EINVALID unless name is a channel name such as "#ops".
func ValidateChannel(name string) error {
	if len(name) < 2 || name[0] != '#' || !isName(name[1:]) {
		return Errorf(EINVALID, "channel %q is invalid: expected '#' followed by 1-63 characters of a-z, 0-9, '.', '_' or '-' (for example \"#general\")", name)
	}
	return nil
}

// ParseMentions returns the agent names mentioned as @name in body, in order
// of first appearance, without duplicates. A mention is '@' at the start
// of body or after a character that is neither a word character
// ([0-9A-Za-z_]) nor '@' (so e-mail addresses are not mentions), then a
// name: [a-z0-9] and up to 62 of [a-z0-9._-]. The character before '@'
// must not belong to the previous mention ("@a.@b" mentions only a).
// Trailing dots are not part of a name ("ask @bob." mentions bob).
func ParseMentions(body string) []string {
	var out []string
	var seen map[string]bool
	end := 0 // where the previous mention ended
	for at := strings.IndexByte(body, '@'); at >= 0; at = indexAt(body, at+1) {
		if at > 0 && (at-1 < end || isWordByte(body[at-1]) || body[at-1] == '@') {
			continue
		}
		n := at + 1
		if n == len(body) || !isNameStart(body[n]) {
			continue
		}
		for n++; n < len(body) && n-at <= maxNameLen && isNameByte(body[n]); n++ {
		}
		end = n
		name := strings.TrimRight(body[at+1:n], ".")
		if seen == nil {
			seen = map[string]bool{}
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// indexAt returns the index of the first '@' in s at or after from, or -1.
func indexAt(s string, from int) int {
	if i := strings.IndexByte(s[from:], '@'); i >= 0 {
		return from + i
	}
	return -1
}

// isWordByte reports whether c is an ASCII word character, [0-9A-Za-z_].
// A byte of a multi-byte UTF-8 sequence is not: such a character is not a
// word character either.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
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
	// Priority: zero means PriorityNormal.
	Priority    Priority
	AckRequired bool
	// Project is, for a system sender, the project of an unqualified
	// channel name and of the message (DefaultProject if empty); an
	// agent's messages are of its own project.
	Project string
	// Person is, for a post with a person token, the person: the message
	// is theirs, and it may reach only the projects the person sees.
	Person *Person

	// bodyMentions are the @names of Body, parsed by ValidatePost outside
	// the write transaction (parsing a large body must not hold the writer).
	bodyMentions []string
	parsed       bool
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

// AdminListRequest is the input of Service.AdminList.
type AdminListRequest struct {
	Project string // only this project's messages, if set
	AfterID string
	Limit   int
	Agent   string
	Channel string
	Newest  bool // the newest Limit messages; HasMore then means older ones exist
	// Person, for a person token, keeps the messages of the projects the
	// person sees; nil (the admin token): every project.
	Person *Person
}

// page trims msgs, read with limit+1, to limit and to MaxPageBytes, and returns the cursor to
// hand back (the last message's ID, or after when there is none) and
// whether more messages follow.
func page(msgs []*Message, limit int, after int64) ([]*Message, int64, bool) {
	more := len(msgs) > limit
	if more {
		msgs = msgs[:limit]
	}
	if n := fitPage(msgs); n < len(msgs) {
		msgs, more = msgs[:n], true
	}
	cursor := after
	if len(msgs) > 0 {
		cursor = msgs[len(msgs)-1].ID
	}
	return msgs, cursor, more
}
