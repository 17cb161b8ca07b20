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
	// Via is "" for the agent's own wait, or the path the wait feeds:
	// "channel" (hub mcp's channel push) or "tmux" (hub deliver). A path's
	// wait hands out only what the path should carry (Receipts.HandOut)
	// and records nothing in context: the path confirms (Receipts.Confirm).
	Via string
}

// WaitResult is what Service.Wait returns.
type WaitResult struct {
	Messages []*Message
	Cursor   int64
	TimedOut bool
	Status   *Status
	Waited   time.Duration
}

// waitBudget decides how long a wait may park. Like temporal's matching
// service with its deadline buffer, it keeps Margin back before the
// caller's deadline, so that the caller gets a well-formed timed-out reply
// rather than a DEADLINE_EXCEEDED.
type waitBudget struct {
	Default time.Duration // the timeout when none is requested
	Max     time.Duration // longer requests are clamped to this
	Margin  time.Duration // kept back before the caller's deadline for the reply
}

// park returns how long a wait asked for requested seconds (nil: the
// default; 0: a peek) may park at now when the caller's deadline is
// deadline (zero: none). Zero means answer at once. EINVALID for a negative
// request.
func (b waitBudget) park(requested *int32, now, deadline time.Time) (time.Duration, error) {
	d := b.Default
	if requested != nil {
		n := *requested
		if n < 0 {
			return 0, Errorf(EINVALID, "timeout_seconds %d is negative: give 0 to peek, or 1-%d seconds to wait", n, int(b.Max/time.Second))
		}
		d = time.Duration(n) * time.Second
	}
	d = min(d, b.Max)
	if !deadline.IsZero() {
		d = max(0, min(d, deadline.Sub(now)-b.Margin))
	}
	return d, nil
}
