package hub

import "time"

// Streams of wake-ups (Subscribe): one call holds a stream on which the hub
// sends each batch of new messages as a frame. The stream feeds a path
// (channel, tmux) as a path's wait does: a frame carries what the path
// should carry (Receipts.handOut), is marked delivered once it is sent, and
// the path confirms what reached the agent's context (Receipts.Confirm).
//
// Flow control: the frames a stream has read wait for its reader in a
// queue of at most StreamQueue; while the reader keeps up, the queue holds
// a frame or two. A stream that has more to read (a wake-up, or a backlog
// read a page at a time) and finds the queue full is ahead of its reader:
// it queues one last frame, a resync at the cursor after what it queued,
// and ends. A slow reader thus costs the hub at most StreamQueue+1 frames,
// never a gap: the reader subscribes again from that cursor, and what it
// never got was never marked delivered.

// SubscribeRequest is the input of Waits.Subscribe.
type SubscribeRequest struct {
	// AfterID: frames start after this cursor; "" after the read cursor.
	AfterID string
	// Via is the path the stream feeds: "channel" or "tmux" (required).
	Via string
	// Limit is the most messages per frame (0: the default, 20).
	Limit int
	// Watch: the frames carry the cursor past what arrived, no message;
	// the stream feeds no path (Via empty), so it marks and claims
	// nothing, and a bridge learns from it whether anything is new.
	Watch bool
}

// StreamFrame is one frame of a stream.
type StreamFrame struct {
	Messages []*Message // oldest first; none in the first frame and a resync
	Cursor   int64      // resume after this frame with it as after_id
	Resync   bool       // the reader fell behind: the stream ends after this frame
	Status   *Status    // the caller's status, in the first frame only
}

// StreamQueue is how many frames a stream holds for its reader: past it, a
// wake-up ends the stream with a resync frame.
const StreamQueue = 16

// StreamIdle is how long a stream stays silent at most: a stream with
// nothing to send for that long sends a frame with its cursor alone, so
// its reader knows the stream is live (a bridge answers its agent's hooks
// only while it has heard from the hub within a minute).
const StreamIdle = 30 * time.Second

// streamAction is what a stream does next.
type streamAction int

const (
	streamLook   streamAction = iota // read the messages after its cursor
	streamPark                       // wait for a wake-up
	streamResync                     // queue a resync frame and end
)

// decideStream returns what a stream with queued frames waiting for its
// reader does next, when woken (a wake-up came since its last look) or
// more (its last look read a full page, so more may follow).
func decideStream(queued int, woken, more bool) streamAction {
	switch {
	case !woken && !more:
		return streamPark
	case queued >= StreamQueue:
		return streamResync // more to read, and the reader has not taken what is queued
	}
	return streamLook
}
