package hub

import "time"

// WaitRequest is the input of Service.Wait.
type WaitRequest struct {
	// TimeoutSeconds: nil means the default; 0 peeks; above the maximum is
	// clamped; negative is EINVALID.
	TimeoutSeconds *int32
	// AfterID: return messages after this cursor instead of unread ones.
	AfterID string
	Limit   int
}

// WaitResult is what Service.Wait returns.
type WaitResult struct {
	Messages []*Message
	Cursor   int64
	TimedOut bool
	Status   *Status
	Waited   time.Duration
}
