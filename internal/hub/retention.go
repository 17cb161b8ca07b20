package hub

import (
	"strconv"
	"strings"
	"time"
)

// Retention: messages older than --retain-messages are deleted by the
// orchestrator, and an admin can prune older messages at any time. Both
// delete in batches, each its own short write transaction, so the single
// writer is never held long. Message IDs (the cursors) are not reused.

// MinRetention is the shortest message retention accepted.
const MinRetention = time.Hour

// ParseRetention parses a retention such as "30d", "12h" or "90m"; "0" or
// "" keeps every message. Errors: EINVALID.
func ParseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
		if n > 100*365 {
			err = strconv.ErrRange
		}
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d < MinRetention {
		return 0, Errorf(EINVALID, "retention %q: give a duration of at least %s such as \"30d\" or \"12h\", or 0 to keep every message", s, MinRetention)
	}
	return d, nil
}
