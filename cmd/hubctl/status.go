package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

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
		"CA fingerprint", dash(r.GetCaFingerprint()),
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

func runWatch(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("watch")
	interval := fs.Duration("interval", 2*time.Second, "refresh period")
	nEvents := fs.Int("events", 10, "how many of the newest events to show")
	once := fs.Bool("once", false, "print one frame and exit")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("watch takes flags only, got %q", pos)
	}
	if *interval <= 0 {
		return usageErrorf("--interval %v: give a positive duration such as 2s", *interval)
	}
	if *nEvents < 0 || *nEvents > 1000 {
		return usageErrorf("--events %d: give 0-1000", *nEvents)
	}
	tty := c.out.IsTerminal()
	if f, ok := c.in.(*os.File); ok && tty && !*once && !c.json && isTerminal(f) {
		var quit context.CancelFunc
		ctx, quit = context.WithCancel(ctx)
		defer quit()
		stop := watchKeys(ctx, f, quit)
		defer stop()
	}
	t := time.NewTicker(*interval)
	defer t.Stop()
	for {
		if err := c.watchFrame(ctx, *nEvents, tty && !*once && !c.json); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if *once || status.Code(err) != codes.Unavailable {
				return err
			}
			// The hub went away: say so and keep trying.
			fmt.Fprintf(c.errOut, "%s  hubctl watch: %s\n", time.Now().Format("15:04:05"), c.explain(err))
		}
		if *once {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// watchFrame prints one view: hub line, agents, newest events.
func (c *cli) watchFrame(ctx context.Context, nEvents int, clear bool) error {
	info, err := c.admin.GetHubInfo(ctx, &hubv1.GetHubInfoRequest{})
	if err != nil {
		return err
	}
	agents, err := c.admin.ListAgents(ctx, &hubv1.ListAgentsRequest{IncludeDisabled: true})
	if err != nil {
		return err
	}
	var events *hubv1.ListEventsResponse
	eventsNote := ""
	if nEvents > 0 {
		events, err = c.admin.ListEvents(ctx, &hubv1.ListEventsRequest{Limit: int32(nEvents)})
		switch {
		case status.Code(err) == codes.Unimplemented:
			eventsNote = "(events are not available on this hub yet)"
		case err != nil:
			return err
		}
	}
	if c.json {
		frame := map[string]json.RawMessage{"info": nil, "agents": nil, "events": json.RawMessage("null")}
		if frame["info"], err = protoJSON(info); err != nil {
			return err
		}
		if frame["agents"], err = protoJSON(agents); err != nil {
			return err
		}
		if events != nil {
			if frame["events"], err = protoJSON(events); err != nil {
				return err
			}
		}
		b, err := json.Marshal(frame)
		if err != nil {
			return err
		}
		return c.writeJSON(b)
	}
	now := time.Now()
	if clear {
		if err := c.out.ClearScreen(); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(c.out, "----")
	}
	fmt.Fprintf(c.out, "hub %s at %s  version %s  beat %d  agents %d  parked waiters %d  (%s)\n\n",
		c.addr, fmtTime(info.GetTime()), info.GetVersion(), info.GetBeat(), info.GetAgents(), info.GetParkedWaiters(), now.Format("15:04:05"))
	if len(agents.GetAgents()) == 0 {
		fmt.Fprintln(c.out, "No agents yet: add one with `hubctl agent add NAME`.")
	} else {
		c.table(agentHeaders, agentRows(agents.GetAgents(), now))
	}
	if nEvents == 0 {
		return nil
	}
	fmt.Fprintln(c.out, "\nNewest events:")
	switch {
	case eventsNote != "":
		fmt.Fprintln(c.out, eventsNote)
	case len(events.GetEvents()) == 0:
		fmt.Fprintln(c.out, "(none)")
	default:
		var rows [][]string
		for _, e := range events.GetEvents() {
			rows = append(rows, []string{fmtTime(e.GetCreatedAt()), dash(e.GetAgent()), e.GetKind(), truncate(e.GetDetail(), 120)})
		}
		c.table([]string{"TIME", "AGENT", "KIND", "DETAIL"}, rows)
	}
	return nil
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
