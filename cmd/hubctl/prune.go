package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// runPrune asks the hub to delete old messages (AdminService.PruneMessages).
func runPrune(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("messages prune")
	beforeFlag := fs.String("before", "", "delete messages created before this RFC 3339 time, or older than this age (30d, 12h)")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *beforeFlag == "" {
		return usageErrorf("give --before TIME or AGE, and nothing else")
	}
	before, err := parseBefore(*beforeFlag, time.Now())
	if err != nil {
		return usageErrorf("%v", err)
	}
	r, err := c.admin.PruneMessages(ctx, &hubv1.PruneMessagesRequest{Before: timestamppb.New(before)})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "deleted %d messages created before %s\n", r.GetDeleted(), before.Format(time.RFC3339))
	return nil
}

// parseBefore reads --before: an RFC 3339 time, or an age counted back
// from now ("30d", "12h"). The hub checks the rest (not in the future).
func parseBefore(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	age, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		age = time.Duration(n) * 24 * time.Hour
	}
	if err != nil || age <= 0 {
		return time.Time{}, fmt.Errorf("--before %q: give an RFC 3339 time such as 2026-01-31T00:00:00Z, or an age such as 30d or 12h", s)
	}
	return now.Add(-age), nil
}
