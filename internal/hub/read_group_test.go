package hub

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// snapshots is a store whose read transaction sees the commits made before
// it began (its tx is that count), as SQLite's and PostgreSQL's do.
type snapshots struct {
	commits atomic.Int64
	views   atomic.Int64
}

func (s *snapshots) view(ctx context.Context, fn func(tx int64) error) error {
	s.views.Add(1)
	return fn(s.commits.Load())
}

// queued waits until n looks wait for the next group.
func queued(g *readGroups[int64], n int) {
	for {
		g.mu.Lock()
		got := len(g.next)
		g.mu.Unlock()
		if got >= n {
			return
		}
		runtime.Gosched()
	}
}

// Looks that come while another reads share the next transaction, and a
// look never reads in a transaction that began before it asked: it sees
// every commit made before it (the one that woke it).
func TestLooksShareATransactionBegunAfterThem(t *testing.T) {
	ctx := context.Background()
	st := &snapshots{}
	g := &readGroups[int64]{view: st.view}
	seen := make([]int64, 12)
	hold, held := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // reads alone, and holds its transaction
		defer wg.Done()
		g.do(ctx, func(tx int64) error { seen[0] = tx; close(held); <-hold; return nil })
	}()
	<-held
	st.commits.Add(1) // wakes the next looks
	hold2, held2 := make(chan struct{}), make(chan struct{})
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.do(ctx, func(tx int64) error {
				seen[i] = tx
				if i == 1 { // the group's transaction has begun: hold it
					close(held2)
					<-hold2
				}
				return nil
			})
		}()
		queued(g, i)
	}
	close(hold)
	<-held2 // the group reads (whichever look leads it)
	st.commits.Add(1)
	for i := 9; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.do(ctx, func(tx int64) error { seen[i] = tx; return nil })
		}()
		queued(g, i-8)
	}
	close(hold2)
	wg.Wait()
	want := []int64{0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("snapshots seen = %v, want %v", seen, want)
	}
	if n := st.views.Load(); n != 3 {
		t.Errorf("%d read transactions for three groups of looks, want 3", n)
	}
}

// A look that fails ends its group's transaction: each look after it reads
// alone, and every look gets its own answer.
func TestALookThatFailsEndsItsGroup(t *testing.T) {
	ctx := context.Background()
	st := &snapshots{}
	g := &readGroups[int64]{view: st.view}
	hold, held := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		g.do(ctx, func(int64) error { close(held); <-hold; return nil })
	}()
	<-held
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.do(ctx, func(int64) error {
				if i == 2 {
					return errors.New("look 2 failed")
				}
				return nil
			})
		}()
		queued(g, i+1)
	}
	close(hold)
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == 2) {
			t.Errorf("look %d: %v", i, err)
		}
	}
	// The first alone; looks 0–2 in one transaction; 3 and 4 alone.
	if n := st.views.Load(); n != 4 {
		t.Errorf("%d read transactions, want 4", n)
	}
}

// A look whose call has ended while it waited for its group does not read.
func TestACancelledLookDoesNotRead(t *testing.T) {
	st := &snapshots{}
	g := &readGroups[int64]{view: st.view}
	hold, held := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.do(context.Background(), func(int64) error { close(held); <-hold; return nil })
	}()
	<-held
	ctx, cancel := context.WithCancel(context.Background())
	var read atomic.Bool
	errc := make(chan error, 2)
	go func() { errc <- g.do(ctx, func(int64) error { read.Store(true); return nil }) }()
	queued(g, 1)
	other := make(chan int64, 1)
	go func() { errc <- g.do(context.Background(), func(tx int64) error { other <- tx; return nil }) }()
	queued(g, 2)
	cancel()
	close(hold)
	<-done
	e1, e2 := <-errc, <-errc
	if !errors.Is(e1, context.Canceled) && !errors.Is(e2, context.Canceled) {
		t.Errorf("errors %v, %v: want one context.Canceled", e1, e2)
	}
	if read.Load() {
		t.Error("the cancelled look read")
	}
	<-other
}

// As many looks as the hub has processors read at once, each alone; the
// next one waits for a group.
func TestLooksReadAloneUpToTheProcessors(t *testing.T) {
	ctx := context.Background()
	st := &snapshots{}
	g := &readGroups[int64]{view: st.view, parallel: 2}
	hold := make(chan struct{})
	held := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.do(ctx, func(int64) error { held <- struct{}{}; <-hold; return nil })
		}()
	}
	<-held
	<-held // both read at once
	wg.Add(1)
	go func() {
		defer wg.Done()
		g.do(ctx, func(int64) error { return nil })
	}()
	queued(g, 1)
	close(hold)
	wg.Wait()
	if n := st.views.Load(); n != 3 {
		t.Errorf("%d read transactions, want 3", n)
	}
}
