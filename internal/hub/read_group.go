package hub

import (
	"context"
	"errors"
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
// ends and reads in one transaction, each look in turn on its own
// goroutine.
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
	turn chan groupTurn[G] // what the look does: lead, read in tx, or read alone
	done chan error        // fn's error, once it has read in another look's tx
}

// groupTurn is what a look of a group is told to do.
type groupTurn[G any] struct {
	lead  []*groupLook[G] // run this group's transaction (the look is its first)
	alone bool            // read in a transaction of its own
	tx    G               // else: read in this transaction, then answer on done
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
	l := &groupLook[G]{ctx: ctx, fn: fn, turn: make(chan groupTurn[G], 1), done: make(chan error, 1)}
	g.next = append(g.next, l)
	g.mu.Unlock()
	t := <-l.turn // bounded by the reads before it: not abandoned on ctx
	switch {
	case t.lead != nil:
		return g.lead(t.lead)
	case t.alone:
		return g.view(ctx, fn)
	}
	err := errReadPanicked // what the leader hears if fn panics
	defer func() { l.done <- err }()
	if err = ctx.Err(); err == nil {
		err = fn(t.tx)
	}
	return err
}

// errReadPanicked is a look's answer to its group when it panicked.
var errReadPanicked = errors.New("a look panicked")

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
func (g *readGroups[G]) lead(group []*groupLook[G]) (err error) {
	first := group[0]
	served := 0
	defer func() { // also when the first look panics
		for _, l := range group[max(served, 1):] {
			l.turn <- groupTurn[G]{alone: true}
		}
		g.startNext()
	}()
	// Not the first look's cancellation: the others read in it too.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(first.ctx), maxDetachedRead)
	defer cancel()
	g.view(ctx, func(tx G) error {
		if err = first.ctx.Err(); err == nil {
			err = first.fn(tx)
		}
		served = 1
		for _, l := range group[1:] {
			if err != nil {
				break
			}
			l.turn <- groupTurn[G]{tx: tx}
			served++
			if <-l.done != nil {
				break
			}
		}
		return nil
	})
	if served == 0 { // the transaction did not begin
		err = g.view(first.ctx, first.fn)
	}
	return err
}
