package hub_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A reader that takes nothing costs the hub nothing past the frame it
// holds: the stream looks again only once its reader took its frame, so
// what arrives meanwhile stays unread and unmarked, and comes, each
// message once and in order, when the reader takes again; a frame counts
// as delivered only once it was sent, and a send that fails ends the
// stream.
func TestStreamReadsOnlyWhatItsReaderTakes(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	st, err := h.Subscribe(ctx, bob, hub.SubscribeRequest{Via: "channel", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	rd := serveStream(t, st)
	rd.take(t, nil) // the first frame
	var posted []int64
	for range 7 {
		posted = append(posted, h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "one of many"}).ID)
	}
	var got []int64
	for len(got) < len(posted) {
		got = append(got, msgIDs(rd.take(t, nil).Messages)...)
	}
	if !slices.Equal(got, posted) {
		t.Fatalf("frames carried %v, want %v (each once, in order)", got, posted)
	}
	lost := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "never sent"}).ID
	refused := errors.New("the reader went away")
	if f := rd.take(t, refused); !slices.Equal(msgIDs(f.Messages), []int64{lost}) {
		t.Fatalf("last frame carried %v, want [%d]", msgIDs(f.Messages), lost)
	}
	if err := <-rd.ended; !errors.Is(err, refused) {
		t.Fatalf("stream ended with %v, want the send's error", err)
	}
	if err := h.FlushDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range append(posted, lost) {
		_, rs, err := h.Receipts.Get(ctx, alice, hub.FormatMessageID(id))
		if err != nil {
			t.Fatal(err)
		}
		sent := id != lost
		if delivered := !rs[0].DeliveredAt.IsZero(); delivered != sent || !rs[0].InContextAt.IsZero() {
			t.Errorf("message %d: receipt %+v, want delivered %v and not in context", id, rs[0], sent)
		}
	}
}

// A stream with nothing to send for StreamIdle sends its cursor alone, so
// its reader knows it is live; the messages after it still come.
func TestStreamSaysItIsLiveWhenIdle(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	st, err := h.Subscribe(ctx, bob, hub.SubscribeRequest{Via: "channel"})
	if err != nil {
		t.Fatal(err)
	}
	rd := serveStream(t, st)
	first := rd.take(t, nil)
	h.Clock.Advance(hub.StreamIdle)
	idle := rd.take(t, nil)
	if len(idle.Messages) != 0 || idle.Cursor != first.Cursor {
		t.Fatalf("idle frame = %+v, want the cursor %d alone", idle, first.Cursor)
	}
	id := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "after the quiet"}).ID
	for {
		f := rd.take(t, nil)
		if len(f.Messages) > 0 {
			if got := msgIDs(f.Messages); !slices.Equal(got, []int64{id}) {
				t.Fatalf("frame after the quiet carried %v, want [%d]", got, id)
			}
			break
		}
	}
}

// streamReader reads a served stream: each send waits for the test to
// take its frame (take), and the stream's end comes on ended.
type streamReader struct {
	frames chan *hub.StreamFrame
	sends  chan error // what the send taken returns
	ended  chan error
}

// serveStream serves st to a streamReader; the test's end closes st
// (a send under way returns an error first).
func serveStream(t *testing.T, st *hub.Stream) *streamReader {
	rd := &streamReader{frames: make(chan *hub.StreamFrame), sends: make(chan error), ended: make(chan error, 1)}
	gone := make(chan struct{})
	st.Serve(func(f *hub.StreamFrame) error {
		select {
		case rd.frames <- f:
			return <-rd.sends
		case <-gone:
			return errors.New("the test ended")
		}
	}, func(err error) { rd.ended <- err })
	t.Cleanup(st.Close)
	t.Cleanup(func() { close(gone) })
	return rd
}

// take takes the stream's next frame, whose send returns err.
func (rd *streamReader) take(t *testing.T, err error) *hub.StreamFrame {
	t.Helper()
	select {
	case f := <-rd.frames:
		rd.sends <- err
		return f
	case err := <-rd.ended:
		t.Fatalf("the stream ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no frame in 10s")
	}
	return nil
}
