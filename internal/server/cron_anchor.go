package server

import (
	"time"

	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// minAnchor is the earliest anchor an "every" cron job may give.
var minAnchor = time.Unix(0, 0).UTC()

// checkAnchor refuses a given anchor that is zero or out of range, which
// the domain would otherwise take for "no anchor" and replace with now.
// A missing anchor (nil) is fine: the job is anchored at its creation.
func checkAnchor(job string, anchor *timestamppb.Timestamp) error {
	if anchor == nil {
		return nil
	}
	t := anchor.AsTime()
	if !anchor.IsValid() || t.Before(minAnchor) || t.Equal(minAnchor) {
		return hub.Errorf(hub.EINVALID, "cron job %q: anchor %s is out of range: give an RFC 3339 time after %s (e.g. 2026-01-01T09:00:00Z), or leave it out to anchor at the job's creation", job, t.Format(time.RFC3339), minAnchor.Format(time.RFC3339))
	}
	return nil
}
