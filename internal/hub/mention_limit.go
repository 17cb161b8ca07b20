package hub

// DefaultMaxMentions bounds the distinct @names one message may mention.
// Every mention is looked up in the write transaction, so an unbounded
// number of them (a body made of @names) would hold the single writer and
// delay every other agent's post.
const DefaultMaxMentions = 100
