package hub

import (
	"context"
)

// Search finds the messages delivered to the caller that match req, best
// first, and returns the token of the next page ("" when none follows).
// req.Agent and req.Project must be empty: an agent searches only what it
// may read, the messages delivered to it, which is never a message of a
// project it may not reach (project.go). Errors: EINVALID.
func (s *Messages) Search(ctx context.Context, caller *Agent, req SearchRequest) ([]SearchHit, string, error) {
	if req.Agent != "" || req.Project != "" {
		return nil, "", Errorf(EINVALID, "agent and project are admin filters: an agent searches its own messages")
	}
	q, err := s.searchQuery(req)
	if err != nil {
		return nil, "", err
	}
	q.ReaderID = caller.ID
	return s.search(ctx, q)
}

// AdminSearch finds every message matching req (those delivered to
// req.Agent, those of req.Project, if set), best first. Errors: EINVALID,
// ENOTFOUND.
func (s *Messages) AdminSearch(ctx context.Context, req SearchRequest) ([]SearchHit, string, error) {
	q, err := s.searchQuery(req)
	if err != nil {
		return nil, "", err
	}
	if req.Project != "" {
		if err := ValidateProjectName(req.Project); err != nil {
			return nil, "", err
		}
		q.Project = req.Project
	}
	if req.Agent == "" {
		return s.search(ctx, q)
	}
	if err := ValidateAgentName(req.Agent); err != nil {
		return nil, "", err
	}
	err = view(ctx, s.store, func(tx messagesTx) error {
		a, err := tx.AgentByName(req.Agent)
		if err == nil {
			q.ReaderID = a.ID
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return s.search(ctx, q)
}

// searchQuery validates req into a store query. Errors: EINVALID.
func (s *Messages) searchQuery(req SearchRequest) (SearchQuery, error) {
	var q SearchQuery
	var err error
	if q.Terms, err = ParseSearchTerms(req.Query); err != nil {
		return q, err
	}
	if req.From != "" && !isName(req.From) {
		return q, Errorf(EINVALID, "from %q is not a sender name: expected an agent name, \"admin\" or \"orchestrator\"", req.From)
	}
	if req.Channel != "" {
		if err := ValidateChannel(req.Channel); err != nil {
			return q, err
		}
	}
	if req.MinPriority != 0 {
		if q.MinPriority, err = CheckPriority(req.MinPriority); err != nil {
			return q, err
		}
	}
	if q.Thread, err = ParseMessageID("thread", req.Thread); err != nil {
		return q, err
	}
	if !req.Since.IsZero() && !req.Until.IsZero() && !req.Until.After(req.Since) {
		return q, Errorf(EINVALID, "until (%s) must be after since (%s)", req.Until.UTC().Format("2006-01-02T15:04:05Z"), req.Since.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if q.Offset, err = parsePageToken(req.PageToken); err != nil {
		return q, err
	}
	if req.Limit < 0 {
		return q, Errorf(EINVALID, "limit %d is negative: give 1-%d, or 0 for the default (%d)", req.Limit, maxSearchLimit, defSearchLimit)
	}
	q.Limit = min(req.Limit, maxSearchLimit)
	if q.Limit == 0 {
		q.Limit = defSearchLimit
	}
	q.Sender, q.Channel, q.Since, q.Until = req.From, req.Channel, req.Since, req.Until
	return q, nil
}

// search runs q, reading one hit more than asked to learn whether more follow.
func (s *Messages) search(ctx context.Context, q SearchQuery) ([]SearchHit, string, error) {
	limit := q.Limit
	q.Limit++
	var hits []SearchHit
	err := view(ctx, s.store, func(tx messagesTx) error {
		var err error
		hits, err = tx.SearchMessages(q)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	more := len(hits) > limit
	if more {
		hits = hits[:limit]
	}
	msgs := make([]*Message, len(hits))
	for i := range hits {
		hits[i].Snippet = trimSnippet(hits[i].Snippet)
		msgs[i] = hits[i].Message
	}
	if n := fitPage(msgs); n < len(hits) {
		hits, more = hits[:n], true
	}
	return hits, nextPageToken(q.Offset, len(hits), more), nil
}

// SearchTx finds messages by their words.
type SearchTx interface {
	// SearchMessages ranks the newest MaxRanked messages matching every
	// term of q and its filters and returns them best first (ties: newest
	// first), from q.Offset, at most q.Limit, each with a snippet of its body with the matched words
	// between SnippetMark.
	SearchMessages(q SearchQuery) ([]SearchHit, error)
}
