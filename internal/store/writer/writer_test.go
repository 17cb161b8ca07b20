package writer

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// The writes queued while a batch commits form the next batch; Close
// waits for them, and later writes are refused.
func TestQueueBatchesAndCloses(t *testing.T) {
	t.Parallel()
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	var mu sync.Mutex
	var sizes []int
	q := Start(64, func(batch []*Request) {
		entered <- struct{}{}
		<-gate
		mu.Lock()
		sizes = append(sizes, len(batch))
		mu.Unlock()
		for _, r := range batch {
			r.Done(Call(r.Fn, nil))
		}
	})
	boom := errors.New("boom")
	first := make(chan error, 1)
	go func() { first <- q.Update(context.Background(), func(hub.Tx) error { return nil }) }()
	<-entered // the writer holds the first batch: the next writes queue
	const n = 10
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- q.Update(context.Background(), func(hub.Tx) error {
				if i == 3 {
					panic("bad write")
				}
				if i == 4 {
					return boom
				}
				return nil
			})
		}()
	}
	for q.Queued() < n { // all queued behind the held batch
		runtime.Gosched()
	}
	closed := make(chan bool, 1)
	go func() { closed <- q.Close() }()
	close(gate)
	<-entered
	if !<-closed {
		t.Error("first Close reported the queue already closed")
	}
	if err := <-first; err != nil {
		t.Errorf("first write: %v", err)
	}
	var failed int
	for range n {
		if err := <-errs; err != nil {
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("%d writes failed, want 2 (a panic and an error)", failed)
	}
	if len(sizes) != 2 || sizes[1] != n {
		t.Errorf("batch sizes %v, want [1 %d]", sizes, n)
	}
	if batches, writes := q.Batches(); batches != 2 || writes != n+1 {
		t.Errorf("Batches() = %d, %d; want 2, %d", batches, writes, n+1)
	}
	if err := q.Update(context.Background(), func(hub.Tx) error { return nil }); hub.ErrorCode(err) != hub.EUNAVAILABLE {
		t.Errorf("Update after Close = %v, want EUNAVAILABLE", err)
	}
	if q.Close() {
		t.Error("second Close reported closing the queue")
	}
}
