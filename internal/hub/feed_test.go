package hub

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// A subscriber sees the topics published since it last read, merged into
// one pending set; Notify publishes TopicMessages; closed subscriptions are
// freed and the limit is enforced.
func TestFeed(t *testing.T) {
	t.Parallel()
	ws := NewWaiters(WaitLimits{PerAgent: 1, Total: 1}, SystemClock{})
	f := ws.feed
	a, err := f.Subscribe(AdminStreams)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Subscribe(AdminStreams)
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

	f2 := NewFeed(2)
	s1, _ := f2.Subscribe(AdminStreams)
	if _, err := f2.Subscribe(AdminStreams); err != nil {
		t.Fatal(err)
	}
	_, err = f2.Subscribe(AdminStreams)
	var he *Error
	if !errors.As(err, &he) || he.Code != EEXHAUSTED {
		t.Fatalf("third subscriber: err = %v, want EEXHAUSTED", err)
	}
	s1.Close()
	s1.Close() // idempotent
	if got := f2.Count(); got != 1 {
		t.Errorf("Count after Close = %d, want 1", got)
	}
	if _, err := f2.Subscribe(AdminStreams); err != nil {
		t.Errorf("subscribe after a Close freed a place: %v", err)
	}
	var nilFeed *Feed
	nilFeed.Publish(TopicAgents) // a nil feed ignores publications
}

// A person holds at most maxStreams streams, people together leave
// streamsKeptForAdmin to the admin, and End ends one person's streams at
// once, freeing their places.
func TestFeedStreamsPerPrincipal(t *testing.T) {
	t.Parallel()
	f := NewFeed(defaultFeedSubscribers)
	var pat []*Subscription
	for range maxStreams {
		s, err := f.Subscribe("pat")
		if err != nil {
			t.Fatal(err)
		}
		pat = append(pat, s)
	}
	if _, err := f.Subscribe("pat"); ErrorCode(err) != EEXHAUSTED {
		t.Fatalf("pat's stream %d: %v, want EEXHAUSTED", maxStreams+1, err)
	}
	n := maxStreams
	for i := 0; n < defaultFeedSubscribers-streamsKeptForAdmin; i++ {
		if _, err := f.Subscribe(StreamOwner(fmt.Sprintf("p%d", i/maxStreams))); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if _, err := f.Subscribe("someone"); ErrorCode(err) != EEXHAUSTED {
		t.Fatalf("a person past people's share: %v, want EEXHAUSTED", err)
	}
	for range streamsKeptForAdmin {
		if _, err := f.Subscribe(AdminStreams); err != nil {
			t.Fatalf("the admin with people's streams full: %v", err)
		}
	}

	f.End("pat")
	for i, s := range pat {
		select {
		case <-s.Done():
		default:
			t.Fatalf("pat's stream %d not ended", i)
		}
		s.Close()
	}
	if got, want := f.Count(), defaultFeedSubscribers-maxStreams; got != want {
		t.Errorf("Count after End = %d, want %d", got, want)
	}
	if _, err := f.Subscribe("someone"); err != nil {
		t.Errorf("a person after pat's streams ended: %v", err)
	}
}
