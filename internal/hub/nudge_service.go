package hub

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Nudge checks. Each agent has a place in an indexed schedule
// (agent_checks.next_check_at); CheckNudges looks at the agents that may
// need a nudge now, in batches as SweepHealth does (with checkNudgesEach as
// its one-agent-at-a-time fallback). Input can only move a nudge later,
// except where a call or a mention moves it earlier: FlushPresence and
// ScanMentions lower next_check_at for those agents.

// NudgeTx stores each agent's place in the nudge check schedule and its nudge
// episode, and reads the mentions that make a nudge due.
type NudgeTx interface {
	// DueAgentChecks returns up to limit agent IDs whose next check is due
	// at now, the most overdue first.
	DueAgentChecks(now time.Time, limit int) ([]int64, error)
	// AgentCheck returns an agent's check schedule and nudge state; a zero
	// AgentCheck for the agent if none is stored.
	AgentCheck(agentID int64) (AgentCheck, error)
	// PutAgentCheck stores c (insert or replace), its notice count left
	// as stored.
	PutAgentCheck(c AgentCheck) error
	// ScheduleAgentCheck moves an agent's next check to at if that is
	// earlier than the stored one (or none is stored).
	ScheduleAgentCheck(agentID int64, at time.Time) error
	// PutAgentChecks stores every check of cs (insert or replace), their
	// notice counts left as stored.
	PutAgentChecks(cs []AgentCheck) error
	// ScheduleAgentChecks does ScheduleAgentCheck(c.AgentID, c.At) for each
	// c of cs.
	ScheduleAgentChecks(cs []AgentTime) error
	// DueNudges returns up to limit agents whose nudge check is due at now,
	// the most overdue first (the agents DueAgentChecks returns), each with
	// its check, its liveness state (as LivenessState) and its unread
	// mentions (as UnreadMentions). An agent of known (read earlier in the
	// same transaction, by ID) is taken from there with its liveness state
	// rather than read again.
	DueNudges(now time.Time, limit int, known map[int64]AgentLiveness) ([]DueNudge, error)
	// MentionsAfter returns the mention deliveries of messages with an ID
	// above afterID, up to limit, oldest first, except the orchestrator's
	// own (nudges).
	MentionsAfter(afterID int64, limit int) ([]MentionDelivery, error)
	// UnreadMentions counts the messages mentioning agentID with an ID
	// above readUpTo, except the orchestrator's own (nudges), and returns
	// the oldest one's time.
	UnreadMentions(agentID, readUpTo int64) (n int64, oldest time.Time, err error)
	// ClaimNudges stores each nudged check of ns in place of the check it
	// was decided from, but only where the stored check is still that one
	// (the same episode, nudge count and last nudge time), its notice count
	// with it, and reports for each whether it was stored: false, with
	// nothing written for it, when the stored check changed meanwhile
	// (another orchestrator sent that nudge, after a fail-over) or is gone,
	// so that the nudge is not sent.
	ClaimNudges(ns []NudgeClaim) ([]bool, error)
}

// Nudges is the service of nudges: the checks of agents that may need
// one (CheckNudges, with the health sweep they run after:
// SweepHealthAndNudge), the mentions that make a check due (ScanMentions)
// and the admin's own nudge (Nudge).
type Nudges struct {
	*core
	store    txs[nudgesTx] // the store methods it uses
	liveness sweeper       // the health sweep runs with the nudges
}

// sweeper runs the health sweep (satisfied by *Liveness), alone or inside
// the caller's write.
type sweeper interface {
	SweepHealth(ctx context.Context, now time.Time, limit int) (evaluated, events int, more bool, err error)
	SweepBatch(tx sweepBatchTx, now time.Time, limit int) (sweptBatch, error)
}

// nudgesTx is what the nudges service reads and writes in one transaction:
// the store methods it uses, by their group.
type nudgesTx interface {
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	// DeepWorkTx
	UpdateDeepWork(d *DeepWork) error
	// EventTx
	InsertEvent(e *Event) error
	InsertEvents(es []Event) error
	// HealthTx
	DueHealth(now time.Time, limit int) ([]AgentLiveness, error)
	DueLiveness(now time.Time, limit int) ([]int64, error)
	LivenessState(agentID int64) (*LivenessState, error)
	SaveLivenessStates(sts []*LivenessState, next []time.Time) error
	SetNextEvals(evals []AgentTime) error
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
	InsertMessages(ms []*Message, ds [][]Delivery) error
	MaxMessageID() (int64, error)
	// MetaTx
	Meta(key string) (string, error)
	SetMeta(key, value string) error
	// NudgeTx
	AgentCheck(agentID int64) (AgentCheck, error)
	ClaimNudges(ns []NudgeClaim) ([]bool, error)
	DueAgentChecks(now time.Time, limit int) ([]int64, error)
	DueNudges(now time.Time, limit int, known map[int64]AgentLiveness) ([]DueNudge, error)
	MentionsAfter(afterID int64, limit int) ([]MentionDelivery, error)
	PutAgentCheck(c AgentCheck) error
	PutAgentChecks(cs []AgentCheck) error
	ScheduleAgentCheck(agentID int64, at time.Time) error
	UnreadMentions(agentID, readUpTo int64) (n int64, oldest time.Time, err error)
	// TaskTx
	TasksClaimedBy(agentIDs []int64) (map[int64][]*Task, error)
}

// NewNudges returns the nudges' service.
func NewNudges(c *Core, liveness sweeper) *Nudges {
	return &Nudges{core: c.core, store: txsOf[nudgesTx](c.store), liveness: liveness}
}

// NudgeClaim is a check that records a nudge (Check, with its new nudge
// count and time) and the check it was decided from (Was).
type NudgeClaim struct {
	Check AgentCheck
	Was   AgentCheck
}

// CheckNudges looks at up to set.BatchLimit agents whose nudge check is due
// at now and nudges those that need it, waking them. more is true when the
// batch was full.
func (s *Nudges) CheckNudges(ctx context.Context, now time.Time, set ScheduleSettings) (_ NudgeResult, more bool, _ error) {
	if ok, err := anyDue(ctx, s.store, func(tx nudgesTx) ([]int64, error) { return tx.DueAgentChecks(now, 1) }); !ok || err != nil {
		return NudgeResult{}, false, err
	}
	var b nudgedBatch
	err := update(ctx, s.store, func(tx nudgesTx) (err error) {
		b, err = s.nudgeBatch(tx, now, set, nil)
		return err
	})
	if err == nil {
		return NudgeResult{Checked: b.checked, Nudged: len(b.wake)}, b.checked == set.BatchLimit, nil
	}
	if ctx.Err() != nil {
		return NudgeResult{}, false, err
	}
	return s.checkNudgesEach(ctx, now, set)
}

// nudgedBatch is what nudgeBatch did: the agents checked, and the agents
// nudged (to wake once the transaction has committed).
type nudgedBatch struct {
	checked int
	wake    []int64
}

// nudgeBatchTx is what nudgeBatch reads and writes.
type nudgeBatchTx interface {
	// EventTx
	InsertEvents(es []Event) error
	// MessageTx
	InsertMessages(ms []*Message, ds [][]Delivery) error
	// NudgeTx
	ClaimNudges(ns []NudgeClaim) ([]bool, error)
	DueNudges(now time.Time, limit int, known map[int64]AgentLiveness) ([]DueNudge, error)
	PutAgentChecks(cs []AgentCheck) error
	// TaskTx
	TasksClaimedBy(agentIDs []int64) (map[int64][]*Task, error)
}

// nudgeBatch is CheckNudges' work inside tx: it looks at up to
// set.BatchLimit agents whose nudge check is due at now and nudges those
// that need it. known holds agents already read in tx with their liveness
// state, by ID (DueNudges reads the others).
func (s *Nudges) nudgeBatch(tx nudgeBatchTx, now time.Time, set ScheduleSettings, known map[int64]AgentLiveness) (nudgedBatch, error) {
	rows, err := tx.DueNudges(now, set.BatchLimit, known)
	if err != nil {
		return nudgedBatch{}, err
	}
	checks := make([]AgentCheck, 0, len(rows))
	claims, posts, evs := make([]NudgeClaim, 0, len(rows)), make([]nudgePost, 0, len(rows)), make([]Event, 0, len(rows))
	for _, r := range rows {
		var in NudgeInput
		if !r.Agent.Disabled() {
			in = s.makeNudgeInput(r.Agent, r.State, r.UnreadMentions, r.OldestMention, now)
		}
		c, post, ev, err := s.applyNudge(r.Agent, r.Check, in, now, set)
		if err != nil {
			return nudgedBatch{}, err
		}
		if post.m == nil {
			checks = append(checks, c)
			continue
		}
		claims, posts, evs = append(claims, NudgeClaim{Check: c, Was: r.Check}), append(posts, post), append(evs, ev)
	}
	claims, posts, evs = capNudges(claims, posts, evs, &checks, now, set)
	fresh, err := tx.ClaimNudges(claims)
	if err != nil {
		return nudgedBatch{}, err
	}
	b := nudgedBatch{checked: len(rows)}
	ms := make([]*Message, 0, len(posts))
	ds := make([][]Delivery, 0, len(posts))
	kept := evs[:0]
	for i, p := range posts {
		if fresh[i] { // else another orchestrator sent it: no post, no event
			ms, ds, b.wake = append(ms, p.m), append(ds, p.ds), append(b.wake, claims[i].Check.AgentID)
			kept = append(kept, evs[i])
		}
	}
	if err := nameTasks(tx, ms, b.wake); err != nil {
		return nudgedBatch{}, err
	}
	if err := tx.InsertMessages(ms, ds); err != nil {
		return nudgedBatch{}, err
	}
	if err := tx.InsertEvents(kept); err != nil {
		return nudgedBatch{}, err
	}
	return b, tx.PutAgentChecks(checks)
}

// Nudge sends a nudge to the agent named name now: a system message from
// the orchestrator mentioning it, with text or, when text is empty, a
// default that says how long the agent has been quiet. It wakes the agent's
// parked waits. Errors: ENOTFOUND, EPRECONDITION (disabled agent), EINVALID.
func (s *Nudges) Nudge(ctx context.Context, name, text string) (*Message, error) {
	now := s.clock.Now()
	var m *Message
	err := update(ctx, s.store, func(tx nudgesTx) error {
		a, err := tx.AgentByName(name)
		if err != nil {
			return err
		}
		if a.Disabled() {
			return Errorf(EPRECONDITION, "agent %q is disabled: enable it with `hubctl agent enable %s` before nudging it", a.Name, a.Name)
		}
		body := strings.TrimSpace(text)
		if body == "" {
			in, err := s.nudgeInput(tx, a, now)
			if err != nil {
				return err
			}
			body = nudgeText(in, true, in.UnreadMentions > 0, now)
		} else if !strings.Contains(body, "@"+a.Name) {
			body = "@" + a.Name + ": " + body
		}
		if m, err = s.postNudge(tx, a, body, now); err != nil {
			return err
		}
		return recordEvent(tx, a.ID, EventNudge, "manual nudge: "+body, now)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// insertMessageTx writes one message.
type insertMessageTx interface {
	InsertMessage(m *Message, deliveries []Delivery) error
}

// postNudge posts a nudge to a inside tx: a message from the orchestrator
// to a that mentions it. The recipient is known, so the message is inserted
// directly rather than routed (no name lookups: the sweep does this for
// many agents per tick).
func (s *Nudges) postNudge(tx insertMessageTx, a *Agent, body string, now time.Time) (*Message, error) {
	m, ds, err := s.nudgeMessage(a, body, now)
	if err != nil {
		return nil, err
	}
	if err := tx.InsertMessage(m, ds); err != nil {
		return nil, err
	}
	return m, nil
}

// nudgeMessage returns the nudge to a with body, checked as any post, and
// its delivery, for postNudge or a batch of nudges to insert.
func (s *core) nudgeMessage(a *Agent, body string, now time.Time) (*Message, []Delivery, error) {
	name := []string{a.Name} // addressee and mention: read only, shared
	req := PostRequest{To: name, Body: body, Mentions: name, Kind: KindNudge}
	if err := s.checkPost(&req); err != nil { // the mention is given: no need to parse the body
		return nil, nil, err
	}
	m := &Message{Project: ProjectOr(a.Project), From: SenderOrchestrator, SenderKind: ByHub, To: name, Body: req.Body, Mentions: name, Kind: req.Kind, CreatedAt: now, Priority: req.Priority}
	return m, []Delivery{{AgentID: a.ID, Mention: true}}, nil
}

// metaMentionCursor is the meta key of the last message ID ScanMentions saw.
const metaMentionCursor = "nudge_mention_cursor"

// checkNudgesEach is CheckNudges one agent at a time, each in its own
// write: the fallback when the batch fails.
func (s *Nudges) checkNudgesEach(ctx context.Context, now time.Time, set ScheduleSettings) (_ NudgeResult, more bool, _ error) {
	var ids []int64
	err := view(ctx, s.store, func(tx nudgesTx) (err error) {
		ids, err = tx.DueAgentChecks(now, set.BatchLimit)
		return err
	})
	if err != nil || len(ids) == 0 {
		return NudgeResult{}, false, err
	}
	wake, err := updateEach(ctx, s.store, ids, func(tx nudgesTx, id int64) ([]int64, error) {
		return s.checkNudge(tx, id, now, set)
	})
	return NudgeResult{Checked: len(ids), Nudged: len(wake)}, len(ids) == set.BatchLimit, err
}

// checkNudgeTx is what checkNudge reads and writes.
type checkNudgeTx interface {
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	// EventTx
	InsertEvent(e *Event) error
	// HealthTx
	LivenessState(agentID int64) (*LivenessState, error)
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
	// NudgeTx
	AgentCheck(agentID int64) (AgentCheck, error)
	ClaimNudges(ns []NudgeClaim) ([]bool, error)
	PutAgentCheck(c AgentCheck) error
	UnreadMentions(agentID, readUpTo int64) (n int64, oldest time.Time, err error)
	// TaskTx
	TasksClaimedBy(agentIDs []int64) (map[int64][]*Task, error)
}

// checkNudge looks at one agent inside tx and returns the agents to wake
// (the agent itself when it was nudged).
func (s *Nudges) checkNudge(tx checkNudgeTx, id int64, now time.Time, set ScheduleSettings) ([]int64, error) {
	a, err := tx.AgentByID(id)
	if ErrorCode(err) == ENOTFOUND {
		return nil, nil // removed meanwhile; its check row went with it
	} else if err != nil {
		return nil, err
	}
	c, err := tx.AgentCheck(id)
	if err != nil {
		return nil, err
	}
	c.AgentID = id
	var in NudgeInput
	if !a.Disabled() {
		if in, err = s.nudgeInput(tx, a, now); err != nil {
			return nil, err
		}
	}
	was := c
	c, post, ev, err := s.applyNudge(a, c, in, now, set)
	if err != nil {
		return nil, err
	}
	if post.m != nil {
		var checks []AgentCheck
		claims, _, _ := capNudges([]NudgeClaim{{Check: c, Was: was}}, []nudgePost{post}, []Event{ev}, &checks, now, set)
		if len(claims) == 0 {
			return nil, tx.PutAgentCheck(checks[0])
		}
		c = claims[0].Check
	}
	if post.m == nil {
		return nil, tx.PutAgentCheck(c)
	}
	if err := nameTasks(tx, []*Message{post.m}, []int64{a.ID}); err != nil {
		return nil, err
	}
	fresh, err := tx.ClaimNudges([]NudgeClaim{{Check: c, Was: was}})
	if err != nil || !fresh[0] { // another orchestrator sent it: no post, no event
		return nil, err
	}
	if err := tx.InsertMessage(post.m, post.ds); err != nil {
		return nil, fmt.Errorf("nudge %s: %w", a.Name, err)
	}
	return []int64{a.ID}, tx.InsertEvent(&ev)
}

// capNudges keeps, of the nudges decided (claims, posts and evs side by
// side), those the agents' notice cap allows (notice.go), counting each
// kept one in its claim's check (ClaimNudges stores the count with the
// nudge). The count is the one read with the check (each agent is claimed
// once per batch). A nudge past the cap is not sent: its agent's check is
// kept as it was, to be looked at again when the next clock hour begins,
// and added to checks.
func capNudges(claims []NudgeClaim, posts []nudgePost, evs []Event, checks *[]AgentCheck, now time.Time, set ScheduleSettings) ([]NudgeClaim, []nudgePost, []Event) {
	n := 0
	for i := range claims {
		if set.NoticeCap > 0 {
			ok, count := NoticeAllowed(claims[i].Was.Notices, now, set.NoticeCap)
			if !ok {
				c := claims[i].Was
				c.NextCheckAt = now.Truncate(time.Hour).Add(time.Hour)
				*checks = append(*checks, c)
				continue
			}
			claims[i].Check.Notices = count
		}
		claims[n], posts[n], evs[n] = claims[i], posts[i], evs[i]
		n++
	}
	return claims[:n], posts[:n], evs[:n]
}

// nudgePost is a nudge message to insert with its deliveries.
type nudgePost struct {
	m  *Message
	ds []Delivery
}

// nameTasks adds to each nudge of ms, to the agent of the same index of
// agentIDs, the tasks its agent holds (claimedTaskNote), in one read for
// the batch.
func nameTasks(tx claimedTasksTx, ms []*Message, agentIDs []int64) error {
	notes, err := claimedTaskNotes(tx, agentIDs)
	if err != nil {
		return err
	}
	for i, m := range ms {
		m.Body += notes[agentIDs[i]]
	}
	return nil
}

// applyNudge applies the nudge rules to agent a with check c and input in
// (unused when a is disabled) at now. It returns the check to store, the
// nudge message to post (its message nil when none; when there is one, a
// is to be woken) and the event to record with it; the caller writes them,
// so that it may batch them.
func (s *Nudges) applyNudge(a *Agent, c AgentCheck, in NudgeInput, now time.Time, set ScheduleSettings) (AgentCheck, nudgePost, Event, error) {
	if a.Disabled() {
		c.NextCheckAt = now.Add(idleRecheck)
		return c, nudgePost{}, Event{}, nil
	}
	d := DecideNudge(c, in, now, set)
	c = d.Check
	var post nudgePost
	var ev Event
	if d.Nudge {
		m, ds, err := s.nudgeMessage(a, d.Text, now)
		if err != nil {
			return c, nudgePost{}, Event{}, fmt.Errorf("nudge %s: %w", a.Name, err)
		}
		post = nudgePost{m, ds}
		ev = Event{AgentID: a.ID, Kind: EventNudge, Detail: d.Reason + ": " + d.Text, CreatedAt: now}
	}
	c.NextCheckAt = d.NextAt
	if c.NextCheckAt.IsZero() || c.NextCheckAt.Sub(now) > idleRecheck {
		c.NextCheckAt = now.Add(idleRecheck)
	}
	if !c.NextCheckAt.After(now) {
		c.NextCheckAt = now.Add(time.Second)
	}
	return c, post, ev, nil
}

// nudgeInputTx is what nudgeInput reads and writes.
type nudgeInputTx interface {
	// HealthTx
	LivenessState(agentID int64) (*LivenessState, error)
	// NudgeTx
	UnreadMentions(agentID, readUpTo int64) (n int64, oldest time.Time, err error)
}

// nudgeInput returns what DecideNudge needs about agent a at now, read
// inside tx: its last conscious activity, the strict deep work in force and
// its unread mentions.
func (s *Nudges) nudgeInput(tx nudgeInputTx, a *Agent, now time.Time) (NudgeInput, error) {
	st, err := tx.LivenessState(a.ID)
	if err != nil {
		return NudgeInput{}, err
	}
	n, oldest, err := tx.UnreadMentions(a.ID, a.ReadUpTo)
	if err != nil {
		return NudgeInput{}, err
	}
	return s.makeNudgeInput(a, st, n, oldest, now), nil
}

// makeNudgeInput returns what DecideNudge needs about agent a at now from
// its liveness state st and its unread mentions (n, the oldest at oldest).
func (s *Nudges) makeNudgeInput(a *Agent, st *LivenessState, n int64, oldest time.Time, now time.Time) NudgeInput {
	in := NudgeInput{AgentName: a.Name, LastActivity: st.LastConsciousActivity(), Locale: s.locale(a), Location: s.cfg.Location,
		UnreadMentions: n, OldestMention: oldest}
	if dw := st.ActiveDeepWork; dw != nil && dw.Mode == DeepWorkStrict && dw.InForce(now) {
		in.StrictUntil = dw.EndsAt
	}
	return in
}

// ScanMentions looks at the mentions posted since the last scan and moves
// the mentioned agents' checks to when those mentions become nudge-worthy.
// The cursor moves past every message the scan covered, nudges included
// (they are not mentions to schedule), so each scan reads only what was
// posted since the last one, however many nudges came before.
func (s *Nudges) ScanMentions(ctx context.Context, set ScheduleSettings) error {
	var cursor, next int64
	var ds []MentionDelivery
	fresh := false
	limit := 10 * set.BatchLimit
	err := view(ctx, s.store, func(tx nudgesTx) error {
		v, err := tx.Meta(metaMentionCursor)
		if err != nil {
			return err
		}
		if v == "" {
			// First run: mentions already there are found by each agent's
			// first check (UnreadMentions), so start from the newest.
			fresh = true
			next, err = tx.MaxMessageID()
			return err
		}
		if cursor, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("meta %s = %q: %w", metaMentionCursor, v, err)
		}
		if ds, err = tx.MentionsAfter(cursor, limit); err != nil {
			return err
		}
		if len(ds) == limit { // more to scan: go on from the last one seen
			next = ds[len(ds)-1].MessageID
			return nil
		}
		// Every message up to the newest in this snapshot was scanned (a
		// message that commits later gets a higher ID: one writer).
		next, err = tx.MaxMessageID()
		next = max(next, cursor)
		return err
	})
	if err != nil || (!fresh && next == cursor) {
		return err
	}
	return update(ctx, s.store, func(tx nudgesTx) error {
		for _, d := range ds {
			if err := tx.ScheduleAgentCheck(d.AgentID, d.CreatedAt.Add(set.MentionAge)); err != nil {
				return err
			}
		}
		return tx.SetMeta(metaMentionCursor, strconv.FormatInt(next, 10))
	})
}

// MentionDelivery is one message mentioning one agent.
type MentionDelivery struct {
	AgentID   int64
	MessageID int64
	CreatedAt time.Time
}

// DueNudge is what a nudge check reads about one agent (DueNudges).
type DueNudge struct {
	Agent          *Agent
	Check          AgentCheck
	State          *LivenessState
	UnreadMentions int64     // unread messages mentioning the agent (not counting nudges)
	OldestMention  time.Time // the oldest of them
}

// SweepResult counts what SweepHealthAndNudge did.
type SweepResult struct {
	Evaluated int // agents whose health was re-evaluated
	Events    int // health and deep work events recorded
	NudgeResult
}

// SweepHealthAndNudge does in one write transaction what SweepHealth and
// then CheckNudges do in two: up to set.BatchLimit due health evaluations,
// then up to set.BatchLimit due nudge checks, which take an agent the
// sweep has just evaluated, and its liveness state, from the sweep instead
// of reading them again. When that transaction fails, it runs SweepHealth and
// CheckNudges, each with its own fallback, so that one failing does not
// hold the other. more is true when either batch was full.
func (s *Nudges) SweepHealthAndNudge(ctx context.Context, now time.Time, set ScheduleSettings) (_ SweepResult, more bool, _ error) {
	health, err := anyDue(ctx, s.store, func(tx nudgesTx) ([]int64, error) { return tx.DueLiveness(now, 1) })
	if err != nil {
		return SweepResult{}, false, err
	}
	if !health {
		r, more, err := s.CheckNudges(ctx, now, set)
		return SweepResult{NudgeResult: r}, more, err
	}
	var sw sweptBatch
	var nu nudgedBatch
	err = update(ctx, s.store, func(tx nudgesTx) (err error) {
		if sw, err = s.liveness.SweepBatch(tx, now, set.BatchLimit); err != nil {
			return err
		}
		nu, err = s.nudgeBatch(tx, now, set, sw.agents)
		return err
	})
	if err == nil {
		r := SweepResult{Evaluated: sw.evaluated, Events: sw.events, NudgeResult: NudgeResult{Checked: nu.checked, Nudged: len(nu.wake)}}
		return r, sw.evaluated == set.BatchLimit || nu.checked == set.BatchLimit, nil
	}
	if ctx.Err() != nil {
		return SweepResult{}, false, err
	}
	var r SweepResult
	var hmore, nmore bool
	r.Evaluated, r.Events, hmore, err = s.liveness.SweepHealth(ctx, now, set.BatchLimit)
	var nerr error
	r.NudgeResult, nmore, nerr = s.CheckNudges(ctx, now, set)
	return r, hmore || nmore, errors.Join(err, nerr)
}
