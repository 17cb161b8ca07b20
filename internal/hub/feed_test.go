package hub

import (
	"errors"
	"slices"
	"testing"
)

// A subscriber sees the topics published since it last read, merged into
// one pending set; Notify publishes TopicMessages; closed subscriptions are
// freed and the limit is enforced.
func TestFeed(t *testing.T) {
	t.Parallel()
	ws := NewWaiters(WaitLimits{PerAgent: 1, Total: 1}, SystemClock{})
	f := ws.Feed()
	a, err := f.Subscribe(Principal{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Subscribe(Principal{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ws.Notify() // nobody to wake: no change
	select {
	case <-a.C():
		t.Fatal("Notify with no agents signalled the feed")
	default:
	}
	ws.Notify(7)
	f.Publish(TopicTick)
	f.Publish(TopicTick)
	<-a.C()
	if got, want := a.Take().Names(), []string{"messages", "tick"}; !slices.Equal(got, want) {
		t.Errorf("a took %v, want %v", got, want)
	}
	if got := a.Take(); got != 0 {
		t.Errorf("second Take = %v, want nothing", got.Names())
	}
	<-b.C()
	if got := b.Take(); !got.Has(TopicMessages) || !got.Has(TopicTick) || got.Has(TopicAgents) {
		t.Errorf("b took %v, want messages and tick", got.Names())
	}

	f2 := NewWaiters(WaitLimits{Streams: 2}, SystemClock{}).Feed()
	s1, _ := f2.Subscribe(Principal{}, 0)
	if _, err := f2.Subscribe(Principal{}, 0); err != nil {
		t.Fatal(err)
	}
	_, err = f2.Subscribe(Principal{}, 0)
	var he *Error
	if !errors.As(err, &he) || he.Code != EEXHAUSTED {
		t.Fatalf("third subscriber: err = %v, want EEXHAUSTED", err)
	}
	s1.Close()
	s1.Close() // idempotent
	if got := f2.Count(); got != 1 {
		t.Errorf("Count after Close = %d, want 1", got)
	}
	if _, err := f2.Subscribe(Principal{}, 0); err != nil {
		t.Errorf("subscribe after a Close freed a place: %v", err)
	}
	var nilFeed *Feed
	nilFeed.Publish(TopicAgents) // a nil feed ignores publications
}
