package hub

// Bounds on what one reply carries. A page of messages is cut by bytes as
// well as by count, so that one agent's large messages cannot make a reply
// exceed what the transport carries (gRPC's 4 MiB): the page ends early,
// says more follow, and the cursor moves on.

// MaxPageBytes is the most message text (bodies, names) one page carries;
// a page always holds at least one message, which fits since a body is at
// most MaxBodyLimit.
const MaxPageBytes = 2 << 20

// MaxBodyLimit is the largest message body limit the hub accepts
// (--max-body): one message must always fit in a reply.
const MaxBodyLimit = 1 << 20

// messageOverhead approximates a message's fields other than its texts.
const messageOverhead = 64

// messageSize approximates the bytes m takes in a reply.
func messageSize(m *Message) int {
	n := messageOverhead + len(m.Body) + len(m.From) + len(m.Channel) + len(m.Kind)
	for _, s := range m.To {
		n += len(s) + 2
	}
	for _, s := range m.Mentions {
		n += len(s) + 2
	}
	return n
}

// fitPage returns how many of msgs, from the first, fit in MaxPageBytes
// (at least one when there is one).
func fitPage(msgs []*Message) int {
	total := 0
	for i, m := range msgs {
		total += messageSize(m)
		if total > MaxPageBytes && i > 0 {
			return i
		}
	}
	return len(msgs)
}

// fitPageNewest is fitPage counted from the newest message back: how many
// of the last of msgs fit (at least one when there is one).
func fitPageNewest(msgs []*Message) int {
	total := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		total += messageSize(msgs[i])
		if total > MaxPageBytes && i < len(msgs)-1 {
			return len(msgs) - 1 - i
		}
	}
	return len(msgs)
}
