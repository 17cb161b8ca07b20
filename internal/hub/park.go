package hub

import "fmt"

// Parks and streams: what a principal holds open in the hub. A park is a
// call that waits for something (WaitForMessages, next_task and an
// agent's stream of wake-ups, Subscribe, parked as waits; an approval's
// wait and ask_human, parked on their inbox item); a stream is a response
// that stays open (the dashboard's change stream, a Feed subscription).
// Every one of them registers in the hub's one registry, Waiters, which
// bounds them by one table (WaitLimits) and one rule (admitLocked): each
// kind has a limit per principal and a limit for the whole hub, and some of
// the hub's places may be kept for the admin.
//
//	kind                          agent                  person            admin   hub
//	waits, next_task, Subscribe   PerAgent (4)           -                 -       Total (20,000)
//	approvals and ask_human       ItemsPerAgent (4)      -                 -       Items (10,000)
//	change streams                -                      StreamsPerPerson  -       Streams (64), StreamsKeptForAdmin (8) never given to others
//
// A principal's revocation (Waiters.Revoke) ends everything it holds
// parked, each with its error: its waits answer EUNAUTHORIZED (or the
// error given), its parks on inbox items end as unanswered, its streams
// end. The hub's stop (Waiters.Stop) ends them all. An MCP-over-HTTP
// session holds nothing of its own: the calls it parks are the agent's
// waits, ended by the same revocation (mcpbridge also closes the agent's
// sessions then, after their parked calls have answered).
//
// Wake-ups come by key, after a commit, from the write's record
// (wake.go: core.wake): Notify (an agent's waits), wakeTask and wakeProject
// (parked next_task calls), wakeAnswer (calls parked on inbox items); and
// Feed.Publish (streams).

// Principal names who holds a parked caller: an agent (AgentID), a person
// (Person), or the admin (the zero Principal).
type Principal struct {
	AgentID int64
	Person  string
}

// AgentPrincipal returns the Principal of agent id.
func AgentPrincipal(id int64) Principal { return Principal{AgentID: id} }

// PersonPrincipal returns the Principal of the person named name.
func PersonPrincipal(name string) Principal { return Principal{Person: name} }

func (p Principal) isAdmin() bool { return p == Principal{} }

// String names the principal in error texts.
func (p Principal) String() string {
	switch {
	case p.AgentID != 0:
		return "this agent"
	case p.Person != "":
		return p.Person
	}
	return "the admin"
}

// parkKind is a kind of parked caller, each with its own row of WaitLimits.
type parkKind uint8

const (
	parkWait   parkKind = iota // WaitForMessages, next_task, Subscribe
	parkItem                   // an approval's or ask_human's wait on its item
	parkStream                 // a dashboard change stream
	parkKinds
)

// WaitLimits is the table of how many parked callers the hub holds: per
// principal and kind, and in total per kind (park.go). A zero field of the
// items' and streams' rows takes its default.
type WaitLimits struct {
	PerAgent int // waits one agent may hold at once
	Total    int // waits in the whole hub

	ItemsPerAgent int // calls one agent may park on inbox items (default 4)
	Items         int // calls parked on inbox items in the whole hub (default 10,000)

	StreamsPerPerson    int // change streams one person may hold (default 8)
	Streams             int // change streams in the whole hub (default 64)
	StreamsKeptForAdmin int // of Streams, how many only the admin may take (default 8)
}

// withDefaults returns l with its zero item and stream limits set.
func (l WaitLimits) withDefaults() WaitLimits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.ItemsPerAgent, 4)
	def(&l.Items, 10000)
	def(&l.StreamsPerPerson, 8)
	def(&l.Streams, 64)
	def(&l.StreamsKeptForAdmin, 8)
	l.StreamsKeptForAdmin = min(l.StreamsKeptForAdmin, l.Streams)
	return l
}

// limits returns the row of kind k: the hub's total, how many the
// principal who may hold (own < 0: no limit of its own) and how many of the
// total only the admin may take.
func (l WaitLimits) limits(k parkKind, who Principal) (total, own, keptForAdmin int) {
	own = -1
	switch k {
	case parkWait:
		if who.AgentID != 0 {
			own = l.PerAgent
		}
		return l.Total, own, 0
	case parkItem:
		if who.AgentID != 0 {
			own = l.ItemsPerAgent
		}
		return l.Items, own, 0
	default:
		if who.Person != "" {
			own = l.StreamsPerPerson
		}
		return l.Streams, own, l.StreamsKeptForAdmin
	}
}

// holder counts what one principal holds of one kind.
type holder struct {
	who  Principal
	kind parkKind
}

// admitLocked takes a place of kind k for who, or says which limit refuses
// it (EEXHAUSTED). It is the one rule every parked caller passes.
func (ws *Waiters) admitLocked(who Principal, k parkKind) error {
	total, own, kept := ws.limits.limits(k, who)
	switch {
	case ws.totals[k] >= total:
		return Errorf(EEXHAUSTED, "%s", parkRefusal(k, "total", who, total))
	case own >= 0 && ws.held[holder{who, k}] >= own:
		return Errorf(EEXHAUSTED, "%s", parkRefusal(k, "own", who, own))
	case kept > 0 && !who.isAdmin() && ws.totals[k]-ws.held[holder{Principal{}, k}] >= total-kept:
		return Errorf(EEXHAUSTED, "%s", parkRefusal(k, "share", who, total-kept))
	}
	ws.totals[k]++
	ws.held[holder{who, k}]++
	return nil
}

// releaseLocked gives back a place taken by admitLocked.
func (ws *Waiters) releaseLocked(who Principal, k parkKind) {
	ws.totals[k]--
	h := holder{who, k}
	if ws.held[h]--; ws.held[h] <= 0 {
		delete(ws.held, h)
	}
}

// parkRefusal says which limit of kind k refused who: the hub's total
// ("total"), the principal's own ("own"), or the share of those who are
// not the admin ("share"), each with what to do.
func parkRefusal(k parkKind, limit string, who Principal, n int) string {
	switch k {
	case parkWait:
		if limit == "total" {
			return fmt.Sprintf("the hub already holds %d parked waits (its limit): retry in a few seconds, or raise --max-waiters", n)
		}
		return fmt.Sprintf("%s already has %d parked waits (the per-agent limit): end or cancel one before starting another", who, n)
	case parkItem:
		if limit == "total" {
			return fmt.Sprintf("the hub already holds %d calls waiting for people (its limit): retry shortly", n)
		}
		return fmt.Sprintf("%s already has %d calls waiting for people (approvals and questions, the per-agent limit): answer or cancel one first", who, n)
	}
	switch limit {
	case "total":
		return fmt.Sprintf("the hub already streams changes to %d pages (its limit): close a dashboard tab and retry", n)
	case "own":
		return fmt.Sprintf("%s already holds %d change streams (the limit per person): close a dashboard tab and retry", who, n)
	}
	return fmt.Sprintf("people already hold %d change streams, the most the hub gives them (the rest are kept for the admin): close a dashboard tab and retry", n)
}
