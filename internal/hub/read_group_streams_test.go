package hub_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// heldView holds the first read transaction begun once armed until
// release: the looks that come meanwhile form a group.
type heldView struct {
	hub.Store
	armed   atomic.Bool
	held    chan struct{}
	release chan struct{}
}

func (s *heldView) View(ctx context.Context, fn func(hub.Tx) error) error {
	if s.armed.CompareAndSwap(true, false) {
		s.held <- struct{}{}
		<-s.release
	}
	return s.Store.View(ctx, fn)
}

// Streams woken together by channel posts, their looks sharing read
// transactions, each carry exactly what a read of their own inbox gives:
// the channel's posts and the direct messages to them, not the others',
// each once and in order.
func TestWokenStreamsCarryWhatTheirOwnReadGives(t *testing.T) {
	h := newTestHub(t)
	ctx := context.Background()
	store := &heldView{Store: h.DB, held: make(chan struct{})}
	svc := h.over(t, store)
	alice, _ := h.agent(t, "alice")
	if _, err := h.JoinChannel(ctx, alice, "#ops"); err != nil {
		t.Fatal(err)
	}
	var members []*hub.Agent
	var streams []*hub.Stream
	for i := range 12 {
		a, _ := h.agent(t, fmt.Sprintf("m%d", i))
		if _, err := h.JoinChannel(ctx, a, "#ops"); err != nil {
			t.Fatal(err)
		}
		st, err := svc.Subscribe(ctx, a, hub.SubscribeRequest{Via: "channel", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.Next(ctx); err != nil { // the first frame
			t.Fatal(err)
		}
		members, streams = append(members, a), append(streams, st)
	}
	const rounds = 4
	want := make([][]int64, len(members))
	got := make([][]int64, len(members))
	for r := range rounds {
		var wg sync.WaitGroup
		for i, st := range streams {
			wg.Add(1)
			target := len(want[i]) + 1 // and the post below
			// Woken by the post below, with the other streams.
			go func() {
				defer wg.Done()
				for len(got[i]) < target {
					f, err := st.Next(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					if err := st.Sent(ctx, f); err != nil {
						t.Error(err)
					}
					got[i] = append(got[i], msgIDs(f.Messages)...)
				}
			}()
		}
		store.release = make(chan struct{})
		store.armed.Store(true)
		m, err := svc.Post(ctx, alice, "", hub.PostRequest{Channel: "#ops", Body: fmt.Sprintf("round %d", r)})
		if err != nil {
			t.Fatal(err)
		}
		id := m.ID
		<-store.held // the first woken look reads; the others come meanwhile
		time.Sleep(20 * time.Millisecond)
		close(store.release)
		for i := range members {
			want[i] = append(want[i], id)
		}
		wg.Wait()
		for i, a := range members {
			if i%3 == r%3 { // a direct message, read by the next round's look
				m, err := svc.Post(ctx, alice, "", hub.PostRequest{To: []string{a.Name}, Body: "just you"})
				if err != nil {
					t.Fatal(err)
				}
				want[i] = append(want[i], m.ID)
			}
		}
	}
	for i, a := range members {
		if len(got[i]) < len(want[i]) { // the last round's direct messages
			f, err := streams[i].Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = append(got[i], msgIDs(f.Messages)...)
		}
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("%s's frames carried %v, want %v", a.Name, got[i], want[i])
		}
		if own := msgIDs(h.inbox(t, a)); !slices.Equal(got[i], own) {
			t.Errorf("%s's frames carried %v, its own read gives %v", a.Name, got[i], own)
		}
	}
}
