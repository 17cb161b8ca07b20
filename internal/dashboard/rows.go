package dashboard

import (
	"context"
	"encoding/json"
	"hash/fnv"
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
// the rows that changed, as "agents" events:
//
//	event: agents
//	data: {"beat":"42","rows":[<AgentOverview as the REST API writes it>…],"gone":["name"…]}
//
// One rowCaster per dashboard reads the changed rows once (hub.OverviewWatch)
// and writes the same event to every stream, so what the hub does for live
// pages follows the changes, not agents × pages. A row goes out only when
// what it shows differs from what was last sent (rowHash: its last-seen
// times count to the minute).
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

var (
	rowJSON   = protojson.MarshalOptions{UseProtoNames: true}
	rowBinary = proto.MarshalOptions{Deterministic: true} // what a row's hash is of
)

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
	sent    map[string]uint64 // agent name → hash of the row last sent (a row not in it is sent)
	readAll bool              // the next pass reads every row (changes were lost)
	rowSize int               // bytes per row of the last event, to size the next
	hashBuf []byte            // a row's encoding, hashed
}

func newRowCaster(opts Options, closing <-chan struct{}) *rowCaster {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-closing
		cancel()
	}()
	return &rowCaster{opts: opts, closing: closing, ctx: ctx, sinks: map[*sink]struct{}{}, joined: make(chan struct{}, 1), sent: map[string]uint64{}, rowSize: 1024}
}

// join adds a stream. Call it after the stream subscribed to the feed and
// before its page reads every row. The first stream after none forgets
// what was sent: while no page was open nothing was marked, so a row sent
// then may have changed and changed back, and a page that reads it now
// must get its next change whatever the old hash says.
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
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		name := r.GetAgent().GetName()
		seen[name] = true
		h, ok := c.rowHash(r)
		if ok && c.sent[name] == h {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		j, err := rowJSON.MarshalAppend(b, r)
		if err != nil {
			if n > 0 {
				b = b[:len(b)-1] // its comma
			}
			continue
		}
		b = j
		c.sent[name] = h
		n++
	}
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

// rowHash hashes what a row shows: without its evaluation time (the time
// of the read) and its beats since the last call (the page counts them
// from the beat of the event), its last-seen times to the seenGrain. The
// row is put back as it was.
func (c *rowCaster) rowHash(r *hubv1.AgentOverview) (uint64, bool) {
	a, h := r.GetAgent(), r.GetHealth()
	if h != nil {
		at := h.EvaluatedAt
		h.EvaluatedAt = nil
		defer func() { h.EvaluatedAt = at }()
		defer coarse(h.LastSeenAt)()
	}
	if a != nil {
		since := a.SinceLast
		a.SinceLast = 0
		defer func() { a.SinceLast = since }()
		defer coarse(a.LastSeenAt)()
		for _, p := range a.Paths {
			defer coarse(p.LastSeenAt)()
		}
	}
	var err error
	c.hashBuf, err = rowBinary.MarshalAppend(c.hashBuf[:0], r)
	if err != nil {
		return 0, false
	}
	f := fnv.New64a()
	f.Write(c.hashBuf)
	return f.Sum64(), true
}

// coarse cuts t to the seenGrain and returns what puts it back.
func coarse(t *timestamppb.Timestamp) func() {
	if t == nil {
		return func() {}
	}
	sec, nanos := t.Seconds, t.Nanos
	t.Seconds, t.Nanos = sec-sec%int64(seenGrain/time.Second), 0
	return func() { t.Seconds, t.Nanos = sec, nanos }
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
