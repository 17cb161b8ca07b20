package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// usageCmd shows what agents spent, as their hosts reported it:
// `hubctl usage [--by agent,model] [--since 24h] [--until T] [--agent NAME]`.
func usageCmd(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("usage")
	by := fs.String("by", "agent", "group by agent, project, task, model or day, several separated by commas")
	since := fs.String("since", "", "from then: a duration back (7d as 168h) or a time (RFC 3339); default a day before --until")
	until := fs.String("until", "", "until then: a duration back or a time (RFC 3339); default now")
	agent := fs.String("agent", "", "only this agent's usage")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	now := time.Now()
	s, err := parseTimeBack("since", *since, now)
	if err != nil {
		return err
	}
	u, err := parseTimeBack("until", *until, now)
	if err != nil {
		return err
	}
	r, err := c.admin.ListUsage(ctx, &hubv1.ListUsageRequest{GroupBy: *by, Since: s, Until: u, Agent: *agent})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetRows()) == 0 {
		fmt.Fprintln(c.out, "no usage reported in that span (docs/usage.md: point each host's telemetry at the hub)")
		return nil
	}
	rows := make([][]string, 0, len(r.GetRows()))
	for _, x := range r.GetRows() {
		task := ""
		if x.GetTask() != 0 {
			task = strconv.FormatInt(x.GetTask(), 10) + " " + truncate(x.GetTaskTitle(), 30)
		}
		day := ""
		if x.GetDay() != nil {
			day = x.GetDay().AsTime().UTC().Format(time.DateOnly)
		}
		rows = append(rows, []string{dash(x.GetAgent()), dash(x.GetProject()), dash(task), dash(x.GetModel()), dash(day),
			strconv.FormatInt(x.GetInputTokens(), 10), strconv.FormatInt(x.GetOutputTokens(), 10),
			strconv.FormatInt(x.GetCacheReadTokens(), 10), strconv.FormatInt(x.GetCacheCreationTokens(), 10),
			strconv.FormatInt(x.GetRequests(), 10), fmt.Sprintf("%.4f", x.GetCostUsd())})
	}
	c.table([]string{"AGENT", "PROJECT", "TASK", "MODEL", "DAY", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "REQUESTS", "USD"}, rows)
	return nil
}
