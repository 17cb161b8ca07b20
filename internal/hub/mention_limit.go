package hub

// DefaultMaxMentions bounds the distinct @names one message may mention.
// Every mention is looked up in the write transaction, so an unbounded
// number of them (a body made of @names) would hold the single writer and
// delay every other agent's post.
const DefaultMaxMentions = 100

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
