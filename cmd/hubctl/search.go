package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

func runSearch(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("messages search")
	agent := fs.String("agent", "", "only messages delivered to this agent")
	project := fs.String("project", "", "only this project's messages")
	from := fs.String("from", "", "only messages from this sender (an agent, admin or orchestrator)")
	channel := fs.String("channel", "", "only this channel (#name)")
	thread := fs.String("thread", "", "only this message and its replies (a message ID)")
	since := fs.String("since", "", "only messages since then: a duration back (24h) or a time (RFC 3339)")
	until := fs.String("until", "", "only messages before then: a duration back (1h) or a time (RFC 3339)")
	minPrio := fs.String("min-priority", "", "only messages of at least this priority: low, normal, high or urgent")
	limit := fs.Int("limit", 20, "how many hits to show (at most 100)")
	page := fs.String("page", "", "the page token printed under the previous page")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	query := strings.Join(pos, " ")
	if strings.TrimSpace(query) == "" {
		return usageErrorf(`give the QUERY: words that must all be in the message, or "a phrase"`)
	}
	now := time.Now()
	req := &hubv1.SearchMessagesRequest{Query: query, From: *from, Channel: *channel, Thread: *thread, Limit: int32(*limit), PageToken: *page}
	if req.Channel != "" && !strings.HasPrefix(req.Channel, "#") {
		req.Channel = "#" + req.Channel
	}
	if *minPrio != "" {
		p, ok := priorityFlag[strings.ToLower(*minPrio)]
		if !ok {
			return usageErrorf("--min-priority %q: give one of low, normal, high, urgent", *minPrio)
		}
		req.MinPriority = p
	}
	if req.Since, err = parseTimeBack("since", *since, now); err != nil {
		return err
	}
	if req.Until, err = parseTimeBack("until", *until, now); err != nil {
		return err
	}
	req.Agent, req.Project = *agent, *project
	r, err := c.asAdmin.SearchMessages(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetHits()) == 0 {
		fmt.Fprintln(c.out, "No messages found.")
		return nil
	}
	rows := make([][]string, 0, len(r.GetHits()))
	for _, h := range r.GetHits() {
		m := h.GetMessage()
		rows = append(rows, []string{m.GetId(), fmtTime(m.GetCreatedAt()), sender(m), recipients(m),
			strconv.FormatFloat(h.GetScore(), 'f', 2, 64), oneLine(h.GetSnippet())})
	}
	c.table([]string{"ID", "TIME", "FROM", "TO", "SCORE", "MATCH"}, rows)
	if next := r.GetNextPageToken(); next != "" {
		fmt.Fprintf(c.out, "More: hubctl messages search --page %s … (same query and flags)\n", next)
	}
	return nil
}
