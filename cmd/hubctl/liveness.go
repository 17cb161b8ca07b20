package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The liveness commands: health, events and deep work.

func healthCmd(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("health")
	names, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		r, err := c.admin.ListAgents(ctx, &hubv1.ListAgentsRequest{})
		if err != nil {
			return err
		}
		for _, a := range r.GetAgents() {
			names = append(names, a.GetName())
		}
	}
	var hs []*hubv1.AgentHealth
	for _, name := range names {
		r, err := c.admin.GetAgentHealth(ctx, &hubv1.GetAgentHealthRequest{Name: name})
		if err != nil {
			return err
		}
		hs = append(hs, r.GetHealth())
	}
	if c.json {
		out := make([]json.RawMessage, len(hs))
		for i, h := range hs {
			if out[i], err = protoJSON(h); err != nil {
				return err
			}
		}
		return c.printJSON(out)
	}
	if len(hs) == 1 {
		printHealth(c, hs[0])
		return nil
	}
	rows := make([][]string, 0, len(hs))
	for _, h := range hs {
		now := h.GetEvaluatedAt().AsTime()
		var fs []string
		for _, f := range h.GetFindings() {
			fs = append(fs, f.GetKind())
		}
		rows = append(rows, []string{h.GetAgent(), h.GetState(), h.GetPresence(), fmtAgo(h.GetLastActivityAt(), now),
			fmtAgo(h.GetLastReflectionAt(), now), deepWorkSummary(h.GetDeepWork(), now), dash(strings.Join(fs, ","))})
	}
	c.table([]string{"AGENT", "HEALTH", "PRESENCE", "LAST ACTIVITY", "LAST REFLECTION", "DEEP WORK", "FINDINGS"}, rows)
	return nil
}

// printHealth prints one agent's health report.
func printHealth(c *cli, h *hubv1.AgentHealth) {
	now := h.GetEvaluatedAt().AsTime()
	c.fields(
		"agent", h.GetAgent(),
		"health", h.GetState(),
		"presence", h.GetPresence(),
		"last activity", fmtAgo(h.GetLastActivityAt(), now),
		"last activity log", fmtAgo(h.GetLastActivityLogAt(), now),
		"last checkpoint", fmtAgo(h.GetLastCheckpointAt(), now),
		"last reflection", fmtAgo(h.GetLastReflectionAt(), now),
		"last seen", fmtAgo(h.GetLastSeenAt(), now),
		"deep work", deepWorkSummary(h.GetDeepWork(), now),
		"reflection due", yesNo(h.GetReflectionDue()),
	)
	if len(h.GetFindings()) == 0 {
		return
	}
	fmt.Fprintln(c.out, "\nFindings:")
	rows := make([][]string, 0, len(h.GetFindings()))
	for _, f := range h.GetFindings() {
		rows = append(rows, []string{f.GetSeverity(), f.GetKind(), fmtAgo(f.GetSince(), now), f.GetText()})
	}
	c.table([]string{"SEVERITY", "KIND", "SINCE", "TEXT"}, rows)
}

// deepWorkSummary is one cell: "strict until 15:20 (12m left): text".
func deepWorkSummary(d *hubv1.DeepWork, now time.Time) string {
	if d == nil {
		return "-"
	}
	s := d.GetMode()
	switch {
	case d.GetState() != "active":
		s += " " + d.GetState()
	case d.GetEndsAt() != nil:
		s += " until " + fmtTime(d.GetEndsAt()) + " (" + fmtDuration(d.GetEndsAt().AsTime().Sub(now)) + " left)"
	}
	return s + ": " + truncate(d.GetPlannedActivity(), 40)
}

// parseTimeBack reads a time flag such as --since: a duration back from
// now ("90m") or a time (RFC 3339).
func parseTimeBack(flag, s string, now time.Time) (*timestamppb.Timestamp, error) {
	if s == "" {
		return nil, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return nil, usageErrorf("--%s %s is negative: give how long back, e.g. 1h", flag, s)
		}
		return timestamppb.New(now.Add(-d)), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return timestamppb.New(t), nil
	}
	return nil, usageErrorf("--%s %q is neither a duration (90m, 2h) nor a time (2026-01-19T14:00:00Z)", flag, s)
}

func eventsCmd(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("events")
	agent := fs.String("agent", "", "only this agent's events")
	kind := fs.String("kind", "", "only this kind (health_changed, deep_work_started, deep_work_completed, deep_work_expired, reflection_skipped, reflection_waived, nudge, …)")
	since := fs.String("since", "", "only events since then: a duration back (1h) or a time (RFC 3339)")
	limit := fs.Int("limit", 50, "how many of the newest events to show")
	follow := fs.Bool("follow", false, "keep printing new events as they happen (Ctrl-C stops)")
	interval := fs.Duration("interval", 2*time.Second, "how often --follow asks for new events")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q: use --agent NAME to select an agent", pos[0])
	}
	sinceTS, err := parseTimeBack("since", *since, time.Now())
	if err != nil {
		return err
	}
	if *follow && *interval <= 0 {
		return usageErrorf("--interval must be positive")
	}
	req := &hubv1.ListEventsRequest{Agent: *agent, Kind: *kind, Since: sinceTS, Limit: int32(*limit)}
	r, err := c.admin.ListEvents(ctx, req)
	if err != nil {
		return err
	}
	if !*follow {
		if c.json {
			return c.printProto(r)
		}
		printEvents(c, r.GetEvents(), true)
		return nil
	}
	header := true
	for {
		evs := r.GetEvents()
		for _, e := range evs {
			if c.json {
				if err := c.printJSONLine(e); err != nil {
					return err
				}
			}
		}
		if !c.json && (len(evs) > 0 || header) {
			printEvents(c, evs, header)
			header = false
		}
		if len(evs) > 0 {
			req.AfterId = evs[len(evs)-1].GetId()
		} else if req.AfterId == "" {
			req.AfterId = "0"
		}
		req.Since = nil
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*interval):
		}
		if r, err = c.admin.ListEvents(ctx, req); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

func printEvents(c *cli, evs []*hubv1.Event, header bool) {
	rows := make([][]string, 0, len(evs))
	for _, e := range evs {
		rows = append(rows, []string{e.GetId(), fmtTime(e.GetCreatedAt()), dash(e.GetAgent()), e.GetKind(), e.GetDetail()})
	}
	if header && len(rows) == 0 {
		fmt.Fprintln(c.out, "no events")
		return
	}
	if header {
		c.table([]string{"ID", "TIME", "AGENT", "KIND", "DETAIL"}, rows)
		return
	}
	for _, r := range rows {
		fmt.Fprintln(c.out, strings.Join(r, "  "))
	}
}

func deepWorkCmd(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("deepwork")
	agent := fs.String("agent", "", "only this agent's declarations")
	state := fs.String("state", "", "only declarations in this state: active, completed or expired")
	limit := fs.Int("limit", 50, "how many of the newest declarations to show")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 1 && *agent == "" {
		*agent = pos[0] // `hubctl deepwork NAME` reads naturally
	} else if len(pos) > 0 {
		return usageErrorf("unexpected argument %q: use --agent NAME to select an agent", pos[0])
	}
	r, err := c.admin.ListDeepWork(ctx, &hubv1.ListDeepWorkRequest{Agent: *agent, State: *state, Limit: int32(*limit)})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetDeepWork()) == 0 {
		fmt.Fprintln(c.out, "no deep work declarations")
		return nil
	}
	rows := make([][]string, 0, len(r.GetDeepWork()))
	for _, d := range r.GetDeepWork() {
		rows = append(rows, []string{d.GetId(), d.GetAgent(), d.GetMode(), d.GetState(), fmtTime(d.GetStartedAt()),
			fmtTime(d.GetEndsAt()), fmtTime(d.GetEndedAt()), truncate(d.GetPlannedActivity(), 60)})
	}
	c.table([]string{"ID", "AGENT", "MODE", "STATE", "STARTED", "ENDS", "ENDED", "PLANNED ACTIVITY"}, rows)
	return nil
}
