package hub

import (
	"context"
	"sync"
)

// A post to a channel wakes the streams and parked waits of its members at
// once (49 in a channel of 50), and each looks at its inbox after its
// cursor. In a transaction of its own, each look cost the store a
// transaction's start (SQLite locks a read mark of the write-ahead log,
// an fcntl system call) and, as anything was committed since that
// connection's last transaction, reading again every page it needs
// (SQLite empties the page cache then). Woken looks therefore share read
// transactions, as writes share commits: a look that comes while as many
// reads are under way as the hub has processors (GOMAXPROCS: more would
// not read sooner) joins the next group, which starts when one of them
// ends and reads in one transaction, each look in turn, all on the first
// look's goroutine (handing the transaction from goroutine to goroutine
// would wait for the scheduler at each look).
//
// What a look sees is what a transaction of its own would give it: a look
// never joins a group whose transaction has begun, so its snapshot is at
// least as new as the moment it asked — it sees every commit that woke it
// — and its reads are its own (the store's visibility rules run in them as
// they would alone). A look that fails ends its group's transaction (a
// PostgreSQL transaction is aborted by an error): the looks after it read
// alone. So does a look that finds its next group full (maxReadGroup).

// maxReadGroup is the most looks one transaction serves, so that a group
// holds its snapshot (and the write-ahead log's frames it needs) for a few
// milliseconds at most.
const maxReadGroup = 64

// readGroups runs looks in shared read transactions of view.
type readGroups[G any] struct {
	view     func(ctx context.Context, fn func(tx G) error) error
	parallel int // the most reads under way at once (0: one)

	mu      sync.Mutex
	reading int             // looks reading alone and groups, under way
	next    []*groupLook[G] // the looks that came meanwhile: the next group
}

// groupLook is one look of a group.
type groupLook[G any] struct {
	ctx  context.Context
	fn   func(tx G) error
	turn chan groupTurn[G] // what became of the look
}

// groupTurn is what a look of a group is told.
type groupTurn[G any] struct {
	lead     []*groupLook[G] // run this group's transaction (the look is its first)
	alone    bool            // read in a transaction of its own
	err      error           // else: it has read, in the group's transaction: fn's error
	panicked any             // or what fn panicked with
}

// do runs fn in a read transaction: its own when fewer than parallel reads
// are under way, else the next group's.
func (g *readGroups[G]) do(ctx context.Context, fn func(tx G) error) error {
	g.mu.Lock()
	if g.reading < max(g.parallel, 1) {
		g.reading++
		g.mu.Unlock()
		defer g.startNext()
		return g.view(ctx, fn)
	}
	if len(g.next) >= maxReadGroup {
		g.mu.Unlock()
		return g.view(ctx, fn)
	}
	l := &groupLook[G]{ctx: ctx, fn: fn, turn: make(chan groupTurn[G], 1)}
	g.next = append(g.next, l)
	g.mu.Unlock()
	t := <-l.turn // bounded by the reads before it: not abandoned on ctx
	switch {
	case t.lead != nil:
		return g.lead(t.lead)
	case t.alone:
		return g.view(ctx, fn)
	case t.panicked != nil:
		panic(t.panicked)
	}
	return t.err
}

// startNext is called when a read ends: it hands the next group, if any,
// to its first look.
func (g *readGroups[G]) startNext() {
	g.mu.Lock()
	group := g.next
	g.next = nil
	if len(group) == 0 {
		g.reading--
	}
	g.mu.Unlock()
	if len(group) > 0 {
		group[0].turn <- groupTurn[G]{lead: group}
	}
}

// lead runs group, whose first look is the caller's: one transaction in
// which each look reads in turn until one fails; the looks not served then
// read alone. It returns the first look's error.
func (g *readGroups[G]) lead(group []*groupLook[G]) error {
	first := group[0]
	served := 1    // the looks told what became of them; the first is the caller's
	defer func() { // also when a look panics
		for _, l := range group[served:] {
			l.turn <- groupTurn[G]{alone: true}
		}
		g.startNext()
	}()
	// Not the first look's cancellation: the others read in it too.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(first.ctx), maxDetachedRead)
	defer cancel()
	var err error
	var panicked any
	began := false
	g.view(ctx, func(tx G) error {
		began = true
		panicked, err = readIn(first, tx)
		for err == nil && panicked == nil && served < len(group) {
			l := group[served]
			p, e := readIn(l, tx)
			l.turn <- groupTurn[G]{err: e, panicked: p}
			served++
			if e != nil || p != nil {
				break
			}
		}
		return nil
	})
	if panicked != nil {
		panic(panicked)
	}
	if !began { // the transaction did not begin
		return g.view(first.ctx, first.fn)
	}
	return err
}

// readIn runs l's read in tx, unless l's call has ended, and returns its
// error or what it panicked with.
func readIn[G any](l *groupLook[G], tx G) (panicked any, err error) {
	defer func() { panicked = recover() }()
	if err = l.ctx.Err(); err == nil {
		err = l.fn(tx)
	}
	return nil, err
}
