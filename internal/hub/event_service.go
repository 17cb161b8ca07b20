package hub

import (
	"context"
	"time"
)

// EventTx stores events (health transitions, deep work, nudges, pulses, cron).
type EventTx interface {
	// InsertEvent inserts e and sets e.ID. AgentID 0 means a hub-wide event.
	InsertEvent(e *Event) error
	// InsertEvents inserts es in order (AgentID 0: hub-wide); it does not
	// set their IDs.
	InsertEvents(es []Event) error
	// ListEvents returns events matching q in ID order: the first Limit
	// after AfterID when it is set, else the newest Limit.
	ListEvents(q EventQuery) ([]*Event, error)
}

// ListEventsRequest is the input of ListEvents. Zero fields match all.
type ListEventsRequest struct {
	Agent   string
	Kind    string
	Since   time.Time
	AfterID string
	Limit   int
}

var eventKindRE = lazyRegexp(`^[a-z][a-z0-9_]{0,63}$`)

// ListEvents returns stored events in ID order: the newest Limit (default
// 50), or the first Limit after AfterID. Errors: EINVALID, ENOTFOUND
// (agent).
func (s *Liveness) ListEvents(ctx context.Context, req ListEventsRequest) ([]*Event, error) {
	q := EventQuery{Kind: EventKind(req.Kind), Since: req.Since}
	var err error
	if q.AfterID, err = ParseMessageID("after_id", req.AfterID); err != nil {
		return nil, err
	}
	if q.Limit, err = s.limit(req.Limit, 50); err != nil {
		return nil, err
	}
	if req.Kind != "" && !eventKindRE().MatchString(req.Kind) {
		return nil, Errorf(EINVALID, "kind %q is not an event kind: expected a lower-case word such as health_changed, deep_work_started, reflection_skipped", req.Kind)
	}
	if req.Agent != "" {
		if err := ValidateAgentName(req.Agent); err != nil {
			return nil, err
		}
	}
	var evs []*Event
	err = view(ctx, s.store, func(tx livenessTx) error {
		if req.Agent != "" {
			a, err := tx.AgentByName(req.Agent)
			if err != nil {
				return err
			}
			q.AgentID = a.ID
		}
		evs, err = tx.ListEvents(q)
		return err
	})
	return evs, err
}

// insertEventTx writes one event of an agent's timeline.
type insertEventTx interface {
	InsertEvent(e *Event) error
}

// recordEvent stores an event in tx (for nudges, pulses,
// cron). agentID 0 makes it hub-wide.
func recordEvent(tx insertEventTx, agentID int64, kind EventKind, detail string, at time.Time) error {
	return tx.InsertEvent(&Event{AgentID: agentID, Kind: kind, Detail: detail, CreatedAt: at})
}
