package hub

import (
	"container/heap"
	"time"
)

// The timeouts of parked waits: one heap of deadlines per Waiters and one
// runtime timer for the earliest, rather than a timer per wait (a runtime
// timer and its callback are ~130 bytes that every parked wait would hold).
// Nothing fires while waits are parked but the earliest deadline.

// expiries is a min-heap of waits by deadline (container/heap); each
// Waiter knows its index so that Close removes it in O(log n).
type expiries []*Waiter

func (e expiries) Len() int           { return len(e) }
func (e expiries) Less(i, j int) bool { return e[i].deadline < e[j].deadline }
func (e expiries) Swap(i, j int) {
	e[i], e[j] = e[j], e[i]
	e[i].expiryIdx, e[j].expiryIdx = int32(i), int32(j)
}

func (e *expiries) Push(x any) {
	w := x.(*Waiter)
	w.expiryIdx = int32(len(*e))
	*e = append(*e, w)
}

func (e *expiries) Pop() any {
	old := *e
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*e = old[:len(old)-1]
	w.expiryIdx = -1
	return w
}

// expireAfter makes the wait expire after d: it is then woken through C
// with expired set. The first call counts; a closed wait never expires.
func (w *Waiter) expireAfter(d time.Duration) {
	ws := w.ws
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w.closed || w.expiryIdx >= 0 {
		return
	}
	w.deadline = ws.clock.Now().Sub(ws.base) + d
	heap.Push(&ws.expiries, w)
	if w.expiryIdx == 0 {
		ws.armLocked()
	}
}

// dropExpiryLocked takes w out of the heap, if it is there. The timer is
// left as it is: if w was the earliest, the timer fires early, finds
// nothing due and is set again.
func (ws *Waiters) dropExpiryLocked(w *Waiter) {
	if w.expiryIdx >= 0 {
		heap.Remove(&ws.expiries, int(w.expiryIdx))
	}
}

// armLocked sets the timer for the earliest deadline (it stops it when no
// wait has one).
func (ws *Waiters) armLocked() {
	if len(ws.expiries) == 0 {
		if ws.expiryTimer != nil {
			ws.expiryTimer.Stop()
		}
		return
	}
	d := ws.expiries[0].deadline - ws.clock.Now().Sub(ws.base)
	if ws.expiryTimer == nil {
		ws.expiryTimer = ws.clock.AfterFunc(d, ws.expireDue)
		return
	}
	ws.expiryTimer.Reset(d)
}

// expireDue expires every wait whose deadline passed and sets the timer for
// the next one.
func (ws *Waiters) expireDue() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	now := ws.clock.Now().Sub(ws.base)
	for len(ws.expiries) > 0 && ws.expiries[0].deadline <= now {
		heap.Pop(&ws.expiries).(*Waiter).expire()
	}
	ws.armLocked()
}
