package hub

import "time"

// Streams of wake-ups (Subscribe): one call holds a stream on which the hub
// sends each batch of new messages as a frame. The stream feeds a path
// (channel, tmux) as a path's wait does: a frame carries what the path
// should carry (Receipts.HandOut), is marked delivered once it is sent, and
// the path confirms what reached the agent's context (Receipts.Confirm).
//
// Flow control: the stream reads its next frame only once the last one
// was sent, on the goroutine that sends it, so a reader that does not read
// holds up the sending (gRPC's flow-control window) and costs the hub one
// frame, never a gap: what arrives meanwhile comes in the frames after,
// read from the stream's cursor, and what was never sent was never marked
// delivered.

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
	Messages []*Message // oldest first; none in the first frame
	Cursor   int64      // resume after this frame with it as after_id
	Status   *Status    // the caller's status, in the first frame only
}

// StreamIdle is how long a stream stays silent at most: a stream with
// nothing to send for that long sends a frame with its cursor alone, so
// its reader knows the stream is live (a bridge answers its agent's hooks
// only while it has heard from the hub within a minute).
const StreamIdle = 30 * time.Second
