// Package writer is the write path that both stores share: Update calls
// queue for one goroutine per store, which hands them to the store's
// commit function in batches, so that one commit serves every write that
// queued meanwhile (group commit). The store's commit runs each write in
// its own savepoint and reports each outcome with Request.Done.
package writer

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/agenthub/hub/internal/hub"
)

// Request is one Update call waiting for the writer.
type Request struct {
	Ctx context.Context // the caller's: a write cancelled while queued is not run
	Fn  func(hub.Tx) error
	err chan error
}

// Done reports the request's outcome to its Update call; call it once.
func (r *Request) Done(err error) { r.err <- err }

// Queue feeds a store's commit function.
type Queue struct {
	reqs   chan *Request
	mu     sync.RWMutex // held shared while queueing, exclusively by Close
	closed bool
	done   chan struct{} // closed when the writer has stopped

	batches, writes atomic.Int64 // handed to commit so far (Batches)
}

// Start starts the writer goroutine: it takes the queued requests, as many
// as are waiting (up to maxBatch), and calls commit with them, one batch at
// a time, until Close.
func Start(maxBatch int, commit func(batch []*Request)) *Queue {
	q := &Queue{reqs: make(chan *Request, 1024), done: make(chan struct{})}
	go q.loop(maxBatch, commit)
	return q
}

func (q *Queue) loop(maxBatch int, commit func([]*Request)) {
	defer close(q.done)
	batch := make([]*Request, 0, maxBatch)
	for req := range q.reqs {
		batch = append(batch[:0], req)
		yielded := false
	drain:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-q.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				// The queue looks empty: let the goroutines that are about
				// to write (handlers decoding their requests) run once, so
				// that their writes share this commit instead of each
				// paying for its own. Without this, 32 concurrent senders
				// got 1.03 writes per commit; with it, about 10.
				if yielded {
					break drain
				}
				yielded = true
				runtime.Gosched()
			}
		}
		q.batches.Add(1)
		q.writes.Add(int64(len(batch)))
		commit(batch)
	}
}

// Update queues fn and returns its outcome. Once queued, the write is either
// committed or failed: Update waits for the outcome even if ctx ends, so no
// acknowledged write is misreported. Errors: EUNAVAILABLE after Close.
func (q *Queue) Update(ctx context.Context, fn func(hub.Tx) error) error {
	req := &Request{Ctx: ctx, Fn: fn, err: make(chan error, 1)}
	q.mu.RLock()
	if q.closed {
		q.mu.RUnlock()
		return hub.Errorf(hub.EUNAVAILABLE, "the store is closed: the hub is shutting down")
	}
	select {
	case q.reqs <- req:
	case <-ctx.Done():
		q.mu.RUnlock()
		return ctx.Err()
	}
	q.mu.RUnlock()
	return <-req.err
}

// Close stops taking writes and returns once the queued ones are done. It
// reports whether this call closed the queue (false: it was closed before).
func (q *Queue) Close() bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.closed = true
	close(q.reqs)
	q.mu.Unlock()
	<-q.done
	return true
}

// Queued returns how many writes wait for the writer (the store's write
// backlog, shown in /metrics).
func (q *Queue) Queued() int { return len(q.reqs) }

// Batches returns how many batches the writer has handed to its commit
// function so far, and how many writes they held: writes ÷ batches is how
// many writes share a commit (shown in /metrics).
func (q *Queue) Batches() (batches, writes int64) { return q.batches.Load(), q.writes.Load() }

// Call runs fn on tx, turning a panic into an error, so one bad write
// cannot take the writer (and every other pending write) down.
func Call(fn func(hub.Tx) error, tx hub.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in transaction: %v", p)
		}
	}()
	return fn(tx)
}
