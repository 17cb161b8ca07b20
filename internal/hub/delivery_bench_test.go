package hub_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// cpuNow is the process's CPU time so far (user and system), so that a
// benchmark counts the work of every goroutine and thread it causes (the
// store's writer among them), not only its own wall time.
func cpuNow(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkInContextCost is the cost of recording that a message reached
// its recipient's context, against the CPU of the wait that hands it out,
// on a SQLite file, with the buffered delivery marks as the hub writes
// them (the fallback watcher's loop writes each burst in one transaction;
// one reply at a time, one transaction each):
//
//   - wait: a post, then the WaitForMessages that returns it, as the gRPC
//     server runs it (Begin, Park, Finish), and the write of its mark;
//     post: the posts alone (wait minus post is the wait's cost);
//   - mark/delivered: a reply's mark as the hub wrote it before (delivered
//     only: what a path's reply records now), and its write;
//     mark/in_context: the mark a reply of the agent's own wait or read
//     writes now (in context through the wait, and delivered), and its
//     write; mark/none: neither (their setup alone);
//   - burst/delivered, burst/in_context: the same marks written 100 to a
//     transaction, as the replies of a burst are.
//
// The cost of recording in context is mark/in_context minus
// mark/delivered (burst/… under load), over wait minus post. cpu-ns/op is the process's CPU
// per operation (the post's excluded from wait's); under callgrind
// (instructions, repeatable on a noisy machine) each sub-benchmark's total
// less its baseline's (post, mark/none), over the operations, gives the
// same per operation:
//
//	go test ./internal/hub -run '^$' -bench InContextCost -benchtime 3000x
func BenchmarkInContextCost(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		wait bool
	}{{"wait", true}, {"post", false}} {
		b.Run(bc.name, func(b *testing.B) {
			h := newRealTimeHub(b)
			alice, _ := h.agent(b, "alice")
			bob, _ := h.agent(b, "bob")
			var after int64
			var cpu time.Duration
			for range b.N {
				m := h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "the build is green"})
				if !bc.wait {
					continue
				}
				start := cpuNow(b)
				w, err := h.Begin(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(30), AfterID: hub.FormatMessageID(after)})
				if err != nil {
					b.Fatal(err)
				}
				w.Park(ctx)
				r, err := w.Finish(ctx)
				if err != nil || len(r.Messages) != 1 {
					b.Fatalf("Wait = %+v, %v; want the new message", r, err)
				}
				if err := h.FlushDeliveries(ctx); err != nil {
					b.Fatal(err)
				}
				cpu += cpuNow(b) - start
				after = m.ID
			}
			if bc.wait {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
	for _, bc := range []struct {
		name  string
		via   hub.Via
		burst int // marks per write
	}{
		{"mark/none", 0, 1}, {"mark/delivered", hub.ViaChannel, 1}, {"mark/in_context", hub.ViaWait, 1},
		{"burst/delivered", hub.ViaChannel, 100}, {"burst/in_context", hub.ViaWait, 100},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := newRealTimeHub(b)
			alice, _ := h.agent(b, "alice")
			bob, _ := h.agent(b, "bob")
			// One fresh delivery per operation: a mark writes only the
			// deliveries that have none yet.
			msgs := make([]*hub.Message, 0, b.N)
			for len(msgs) < b.N {
				ms := make([]*hub.Message, 0, 1000)
				ds := make([][]hub.Delivery, 0, 1000)
				for range min(1000, b.N-len(msgs)) {
					ms = append(ms, &hub.Message{From: alice.Name, To: []string{"bob"}, Body: "the build is green", Kind: hub.KindMessage, CreatedAt: time.Now()})
					ds = append(ds, []hub.Delivery{{AgentID: bob.ID}})
				}
				if err := h.DB.Update(ctx, func(tx hub.Tx) error { return tx.InsertMessages(ms, ds) }); err != nil {
					b.Fatal(err)
				}
				msgs = append(msgs, ms...)
			}
			b.ResetTimer()
			start := cpuNow(b)
			for i := range b.N {
				if bc.via == 0 {
					continue
				}
				if err := h.MarkReply(ctx, bob.ID, msgs[i:i+1], bc.via); err != nil {
					b.Fatal(err)
				}
				if (i+1)%bc.burst != 0 && i != b.N-1 {
					continue
				}
				if err := h.FlushDeliveries(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuNow(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
