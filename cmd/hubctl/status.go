package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

func init() {
	register(command{name: "info", group: "hub", summary: "show the hub's version, time, store and orchestrator figures", run: runInfo})
	register(command{name: "status", group: "hub", summary: "show an agent's status (check_hub_status); needs --token or HUB_TOKEN", run: runStatus})
}

func runInfo(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("info")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("info takes no arguments, got %q", pos)
	}
	r, err := c.admin.GetHubInfo(ctx, &hubv1.GetHubInfoRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	tick := "-"
	if r.GetTicks() > 0 {
		tick = fmt.Sprintf("%d ticks, last %s (%dµs)", r.GetTicks(), fmtTime(r.GetLastTickAt()), r.GetLastTickMicros())
		if r.GetLastTickError() != "" {
			tick += ", error: " + r.GetLastTickError()
		}
	}
	c.fields(
		"hub", c.addr,
		"version", r.GetVersion(),
		"time", fmtTime(r.GetTime())+" ("+r.GetTimeZone()+")",
		"started", fmtTime(r.GetStartedAt()),
		"data dir", r.GetDataDir(),
		"schema version", strconv.FormatInt(r.GetSchemaVersion(), 10),
		"agents", strconv.FormatInt(r.GetAgents(), 10),
		"parked waiters", strconv.FormatInt(r.GetParkedWaiters(), 10),
		"beat", strconv.FormatInt(r.GetBeat(), 10),
		"orchestrator", tick,
	)
	return nil
}

func runStatus(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("status")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("status takes no arguments (the agent is the one whose token is given), got %q", pos)
	}
	r, err := c.agent.GetStatus(ctx, &hubv1.GetStatusRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	printStatus(c, r.GetStatus())
	return nil
}

// printStatus prints an agent's status as fields, then its findings.
func printStatus(c *cli, s *hubv1.Status) {
	dw := "-"
	if d := s.GetDeepWork(); d != nil && d.GetState() != "" {
		dw = fmt.Sprintf("%s: %s (since %s", d.GetMode(), d.GetPlannedActivity(), fmtTime(d.GetStartedAt()))
		if d.GetEndsAt() != nil {
			dw += ", until " + fmtTime(d.GetEndsAt())
		}
		dw += ")"
	}
	sinceLast := strconv.FormatInt(s.GetSinceLast(), 10)
	if s.GetSinceLastReading() != "" {
		sinceLast += " (" + s.GetSinceLastReading() + ")"
	}
	c.fields(
		"agent", s.GetAgent(),
		"unread", strconv.FormatInt(s.GetUnreadCount(), 10),
		"mentions", strconv.FormatInt(s.GetMentionCount(), 10),
		"latest message", s.GetLatestMessageId(),
		"heartbeat id", s.GetCurrentHeartbeatId(),
		"beat", strconv.FormatInt(s.GetBeat(), 10),
		"since last", sinceLast,
		"health", s.GetHealth(),
		"deep work", dw,
		"online", strings.Join(s.GetOnline(), ", "),
		"waiting", strings.Join(s.GetWaiting(), ", "),
		"hub", s.GetHubVersion()+" at "+fmtTime(s.GetHubTime()),
	)
	if len(s.GetFindings()) > 0 {
		fmt.Fprintln(c.out)
		rows := make([][]string, 0, len(s.GetFindings()))
		for _, f := range s.GetFindings() {
			rows = append(rows, []string{f.GetSeverity(), f.GetKind(), fmtAgo(f.GetSince(), time.Now()), f.GetText()})
		}
		c.table([]string{"SEVERITY", "FINDING", "SINCE", "TEXT"}, rows)
	}
}
