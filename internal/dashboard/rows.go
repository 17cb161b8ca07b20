package dashboard

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// The rows on the stream: a page reads every agent's overview once per
// connection (GET /v1/admin/agent-overviews), then takes from its stream
// what changed, as "agents" events:
//
//	event: agents
//	data: {"beat":"42","rows":[<AgentOverview>…],"changes":[{"row":<part of an AgentOverview>,"cleared":["unread_count"…]}…],"gone":["name"…]}
//
// "rows" are whole rows as the REST API writes them, for agents the stream
// has not sent yet (and disabled ones, which the page drops). "changes" are
// the rows sent before, in the same shape but with only the fields that
// differ from what was sent, besides agent.name and health.evaluated_at,
// which a change always has; "cleared" names the fields ("unread_count",
// "health.deep_work") that became empty, which the REST API leaves out.
// The page merges a change into the row it holds (roster.js): most changes
// are a count or a time, a tenth of a whole row or less.
//
// One rowCaster per dashboard reads the changed rows once (hub.OverviewWatch)
// and writes the same event to every stream, so what the hub does for live
// pages follows the changes, not agents × pages. A field goes out only when
// what it shows differs from what was last sent (rowDiff: last-seen times
// count to the minute).
// A stream that cannot keep up loses events; it is then told "resync" and
// its page reads everything again.

const (
	// rowGap merges the changes that come within it into one event.
	rowGap = 250 * time.Millisecond
	// rowScan is how often time-driven changes are looked for (presence,
	// the orchestrator's events) when nothing else happens.
	rowScan = time.Second
	// seenGrain is the grain of a row's last-seen times in what it shows:
	// a call that only moves them within it (a heartbeat, a hook's poll)
	// sends no row, so a page may show a last-seen time up to about a
	// minute old; the presence the hub derives from it goes out when it
	// moves.
	seenGrain = time.Minute
	// sinkBuffer is how many events a stream may lag behind.
	sinkBuffer = 32
)

var rowJSON = protojson.MarshalOptions{UseProtoNames: true}

// sink is one stream's share of the rows.
type sink struct {
	c    chan []byte
	lost atomic.Bool // an event did not fit: the page must read everything
}

type rowCaster struct {
	opts    Options
	closing <-chan struct{}
	ctx     context.Context // ends when the dashboard closes

	mu     sync.Mutex
	sinks  map[*sink]struct{}
	joined chan struct{}

	// pass is held while the watch is read and sent updated.
	pass    sync.Mutex
	sent    map[string]*hubv1.AgentOverview // agent name → its row as the pages hold it (a row not in it is sent whole)
	readAll bool                            // the next pass reads every row (changes were lost)
	rowSize int                             // bytes per row of the last event, to size the next
	changes []byte                          // the changes of the event under way, kept for the next
	part    rowPart                         // the change of the row under way
}

// rowPart is a change of one row (rowDiff), its three messages kept from
// row to row: a change is written out before the next row is compared.
type rowPart struct {
	row    hubv1.AgentOverview
	agent  hubv1.Agent
	health hubv1.AgentHealth
}

// reset empties p for a change of cur and returns it: the agent's name,
// and the health's evaluated_at when cur has a health.
func (p *rowPart) reset(cur *hubv1.AgentOverview) *hubv1.AgentOverview {
	proto.Reset(&p.row)
	proto.Reset(&p.agent)
	p.agent.Name = cur.GetAgent().GetName()
	p.row.Agent = &p.agent
	if h := cur.GetHealth(); h != nil {
		proto.Reset(&p.health)
		p.health.EvaluatedAt = h.EvaluatedAt
		p.row.Health = &p.health
	}
	return &p.row
}

func newRowCaster(opts Options, closing <-chan struct{}) *rowCaster {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-closing
		cancel()
	}()
	return &rowCaster{opts: opts, closing: closing, ctx: ctx, sinks: map[*sink]struct{}{}, joined: make(chan struct{}, 1), sent: map[string]*hubv1.AgentOverview{}, rowSize: 1024}
}

// join adds a stream. Call it after the stream subscribed to the feed and
// before its page reads every row. The first stream after none forgets
// what was sent: while no page was open nothing was marked, so a field
// sent then may have changed unseen, and a change against it would leave
// out a field that changes back to it; the next rows go whole.
func (c *rowCaster) join() *sink {
	s := &sink{c: make(chan []byte, sinkBuffer)}
	c.mu.Lock()
	first := len(c.sinks) == 0
	c.sinks[s] = struct{}{}
	c.mu.Unlock()
	if first {
		c.pass.Lock()
		clear(c.sent)
		c.pass.Unlock()
	}
	select {
	case c.joined <- struct{}{}:
	default:
	}
	return s
}

func (c *rowCaster) leave(s *sink) {
	c.mu.Lock()
	delete(c.sinks, s)
	c.mu.Unlock()
}

func (c *rowCaster) idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sinks) == 0
}

// run reads and sends the changed rows until the dashboard closes.
func (c *rowCaster) run() {
	ctx := c.ctx
	clock := c.opts.Clock
	ticker := clock.NewTicker(rowScan)
	defer ticker.Stop()
	lastFull, lastScan := clock.Now(), time.Time{}
	for {
		if c.idle() {
			select {
			case <-c.closing:
				return
			case <-c.joined:
			}
		}
		select {
		case <-c.closing:
			return
		case <-c.opts.Feed.AgentChanges():
		case <-ticker.C():
		case <-c.joined:
		}
		if !sleepCtx(ctx, clock, rowGap) {
			return
		}
		scan := clock.Now().Sub(lastScan) >= rowScan
		if scan {
			lastScan = clock.Now()
		}
		full := c.opts.FullPassEvery > 0 && clock.Now().Sub(lastFull) >= c.opts.FullPassEvery
		if c.step(scan, full) {
			lastFull = clock.Now()
		}
	}
}

// step reads the changed rows and sends those that differ from what was
// sent; it reports whether it read every row.
func (c *rowCaster) step(scan, full bool) bool {
	c.pass.Lock()
	defer c.pass.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	ch, err := c.opts.Watch.Next(ctx, full || c.readAll, scan)
	if err != nil {
		c.readAll = true // the changes taken are lost: read everything next time
		return false
	}
	c.readAll = false
	if ev := c.event(ch); ev != nil {
		c.fanOut(ev)
	}
	return ch.All
}

// event returns the "agents" event of the rows of ch that differ from what
// was sent, nil if none does.
func (c *rowCaster) event(ch hub.OverviewChanges) []byte {
	rows := c.opts.Rows(ch.Rows)
	// One allocation for the event most of the time: sized from the rows
	// of the last one.
	b := make([]byte, 0, 128+len(rows)*c.rowSize)
	b = append(b, "event: agents\ndata: {\"beat\":\""...)
	b = strconv.AppendInt(b, ch.Beat, 10)
	b = append(b, `","rows":[`...)
	head, n := len(b), 0
	var seen map[string]bool // the rows read, when they are every agent's
	if ch.All {
		seen = make(map[string]bool, len(rows))
	}
	// The changes go after the whole rows: each is written here as it is
	// found, with a comma before it.
	changes := c.changes[:0]
	for _, r := range rows {
		name := r.GetAgent().GetName()
		if seen != nil {
			seen[name] = true
		}
		held := c.sent[name]
		// A page holds no disabled agent's row: one that is or was
		// disabled goes whole.
		whole := held == nil || held.GetAgent().GetDisabled() || r.GetAgent().GetDisabled()
		if held != nil {
			part := c.part.reset(r)
			cleared, differs := rowDiff(held, r, part)
			if !differs {
				continue
			}
			if !whole {
				at := len(changes)
				j, err := appendRow(append(changes, `,{"row":`...), part.ProtoReflect())
				if err != nil {
					changes = changes[:at]
					delete(c.sent, name) // what the pages hold is unknown: the next read sends it whole
					continue
				}
				changes = j
				if len(cleared) > 0 {
					g, _ := json.Marshal(cleared) // strings always marshal
					changes = append(append(changes, `,"cleared":`...), g...)
				}
				changes = append(changes, '}')
				n++
				continue
			}
		}
		j, err := appendRow(append(b, ','), r.ProtoReflect())
		if err != nil {
			delete(c.sent, name)
			continue
		}
		b = j
		c.sent[name] = r
		n++
	}
	if len(b) > head {
		b = slices.Delete(b, head, head+1) // the first row's comma
	}
	b = append(b, `],"changes":[`...)
	if len(changes) > 0 {
		b = append(b, changes[1:]...) // but the first change's comma
	}
	c.changes = changes
	if n > 0 {
		c.rowSize = (len(b) - head) / n
	}
	var gone []string
	for _, name := range ch.Gone {
		gone = append(gone, name)
		delete(c.sent, name)
	}
	if ch.All {
		for name := range c.sent {
			if !seen[name] {
				gone = append(gone, name)
				delete(c.sent, name)
			}
		}
	}
	if n == 0 && len(gone) == 0 {
		return nil
	}
	g, _ := json.Marshal(gone) // strings always marshal
	if gone == nil {
		g = []byte("[]")
	}
	b = append(b, `],"gone":`...)
	b = append(b, g...)
	return append(b, "}\n\n"...)
}

// rowDiff compares cur, a row read now, with held, the row as the pages
// hold it, field by field (the agent's and its health's each): into part
// (rowPart.reset: the agent's name and the health's evaluated_at) go the
// fields of cur that show something else than held's, cleared names
// those that became empty, and held becomes what the pages hold after the
// change. differs is false when nothing shown changed, such as a call
// that moves a last-seen time within the minute: last-seen times count to
// the seenGrain. The agent's name is the row's key, in every part; its
// since_last is left out (the page counts it from last_interaction_beat
// and the event's beat); the health's evaluated_at (the time of the read)
// goes with every change, for the page to keep the newer of two rows.
// Every field of the three messages is here: TestRowDiffSeesEveryField
// fails on one that is not.
func rowDiff(held, cur, part *hubv1.AgentOverview) (cleared []string, differs bool) {
	d := &differ{}
	switch {
	case held.Agent != nil && cur.Agent != nil:
		d.prefix = "agent."
		diffAgent(d, held.Agent, cur.Agent, part.Agent)
	case held.Agent != cur.Agent: // never: a row has its agent
		d.note("agent", cur.Agent == nil)
		held.Agent, part.Agent = cur.Agent, cur.Agent
	}
	switch {
	case held.Health != nil && cur.Health != nil:
		d.prefix = "health."
		diffHealth(d, held.Health, cur.Health, part.Health)
	case held.Health != cur.Health:
		d.prefix = ""
		d.note("health", cur.Health == nil)
		held.Health, part.Health = cur.Health, cur.Health
	}
	d.prefix = ""
	scalar(d, "unread_count", &held.UnreadCount, cur.UnreadCount, &part.UnreadCount)
	scalar(d, "mention_count", &held.MentionCount, cur.MentionCount, &part.MentionCount)
	scalar(d, "parked_waits", &held.ParkedWaits, cur.ParkedWaits, &part.ParkedWaits)
	return d.cleared, d.differs
}

func diffAgent(d *differ, h, c, p *hubv1.Agent) {
	scalar(d, "display_name", &h.DisplayName, c.DisplayName, &p.DisplayName)
	scalar(d, "role", &h.Role, c.Role, &p.Role)
	scalar(d, "description", &h.Description, c.Description, &p.Description)
	other(d, "created_at", &h.CreatedAt, c.CreatedAt, &p.CreatedAt, sameTime)
	other(d, "disabled_at", &h.DisabledAt, c.DisabledAt, &p.DisabledAt, sameTime)
	scalar(d, "disabled", &h.Disabled, c.Disabled, &p.Disabled)
	scalar(d, "current_heartbeat_id", &h.CurrentHeartbeatId, c.CurrentHeartbeatId, &p.CurrentHeartbeatId)
	other(d, "last_seen_at", &h.LastSeenAt, c.LastSeenAt, &p.LastSeenAt, sameSeen)
	scalar(d, "locale", &h.Locale, c.Locale, &p.Locale)
	scalar(d, "presence", &h.Presence, c.Presence, &p.Presence)
	scalar(d, "health", &h.Health, c.Health, &p.Health)
	scalar(d, "last_interaction_beat", &h.LastInteractionBeat, c.LastInteractionBeat, &p.LastInteractionBeat)
	scalar(d, "project", &h.Project, c.Project, &p.Project)
	scalar(d, "reachable", &h.Reachable, c.Reachable, &p.Reachable)
	other(d, "paths", &h.Paths, c.Paths, &p.Paths, samePaths)
	other(d, "retired_at", &h.RetiredAt, c.RetiredAt, &p.RetiredAt, sameTime)
}

func diffHealth(d *differ, h, c, p *hubv1.AgentHealth) {
	scalar(d, "agent", &h.Agent, c.Agent, &p.Agent)
	scalar(d, "state", &h.State, c.State, &p.State)
	other(d, "findings", &h.Findings, c.Findings, &p.Findings, sameFindings)
	scalar(d, "presence", &h.Presence, c.Presence, &p.Presence)
	other(d, "last_activity_at", &h.LastActivityAt, c.LastActivityAt, &p.LastActivityAt, sameTime)
	other(d, "last_activity_log_at", &h.LastActivityLogAt, c.LastActivityLogAt, &p.LastActivityLogAt, sameTime)
	other(d, "last_checkpoint_at", &h.LastCheckpointAt, c.LastCheckpointAt, &p.LastCheckpointAt, sameTime)
	other(d, "last_reflection_at", &h.LastReflectionAt, c.LastReflectionAt, &p.LastReflectionAt, sameTime)
	other(d, "last_seen_at", &h.LastSeenAt, c.LastSeenAt, &p.LastSeenAt, sameSeen)
	other(d, "deep_work", &h.DeepWork, c.DeepWork, &p.DeepWork, func(a, b *hubv1.DeepWork) bool { return proto.Equal(a, b) })
	scalar(d, "reflection_due", &h.ReflectionDue, c.ReflectionDue, &p.ReflectionDue)
}

// differ gathers what rowDiff finds.
type differ struct {
	prefix  string // of the fields' names: "agent.", "health." or none
	cleared []string
	differs bool
}

// note records that the field name differs; empty when it became empty,
// which the REST API leaves out.
func (d *differ) note(name string, empty bool) {
	d.differs = true
	if empty {
		d.cleared = append(d.cleared, d.prefix+name)
	}
}

// scalar compares a field of a comparable type; a different value goes
// into held and part.
func scalar[T comparable](d *differ, name string, held *T, cur T, part *T) {
	if *held == cur {
		return
	}
	var zero T
	d.note(name, cur == zero)
	*held, *part = cur, cur
}

// other compares a field of a message or list type with same; a nil one
// and an empty list are empty.
func other[T any](d *differ, name string, held *T, cur T, part *T, same func(a, b T) bool) {
	if same(*held, cur) {
		return
	}
	v := reflect.ValueOf(cur)
	d.note(name, v.IsNil() || v.Kind() == reflect.Slice && v.Len() == 0)
	*held, *part = cur, cur
}

func sameTime(a, b *timestamppb.Timestamp) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Seconds == b.Seconds && a.Nanos == b.Nanos
}

// sameSeen compares last-seen times, which count to the seenGrain.
func sameSeen(a, b *timestamppb.Timestamp) bool {
	grain := int64(seenGrain / time.Second)
	return a == nil && b == nil || a != nil && b != nil && a.Seconds-a.Seconds%grain == b.Seconds-b.Seconds%grain
}

func samePaths(a, b []*hubv1.DeliveryPath) bool {
	return slices.EqualFunc(a, b, func(x, y *hubv1.DeliveryPath) bool {
		return x.Kind == y.Kind && x.Live == y.Live && sameSeen(x.LastSeenAt, y.LastSeenAt)
	})
}

func sameFindings(a, b []*hubv1.Finding) bool {
	return slices.EqualFunc(a, b, func(x, y *hubv1.Finding) bool { return proto.Equal(x, y) })
}

// fanOut hands ev to every stream; one whose buffer is full loses it.
func (c *rowCaster) fanOut(ev []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.sinks {
		select {
		case s.c <- ev:
		default:
			s.lost.Store(true)
		}
	}
}

func sleepCtx(ctx context.Context, clock hub.Clock, d time.Duration) bool {
	t := clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
