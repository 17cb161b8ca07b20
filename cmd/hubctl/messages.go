package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// listFlag is a repeatable flag that also splits on commas.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func runSend(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("send")
	var to, mentions listFlag
	fs.Var(&to, "to", "recipient: an agent NAME or a #channel (repeatable, or comma-separated)")
	channel := fs.String("channel", "", "channel (#name), same as --to #name")
	replyTo := fs.String("reply-to", "", "ID of the message this one answers (thread)")
	fs.Var(&mentions, "mention", "agent to mention besides the @names in the text (repeatable)")
	prio := fs.String("priority", "", "low, normal (default), high or urgent: urgent and high messages come first in the recipients' waits")
	ack := fs.Bool("ack", false, "ask each recipient to acknowledge the message (see `hubctl messages show ID`)")
	project := fs.String("project", "", "the project of a #channel without one (default: default); or name it as project/#channel")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	p, err := parsePriority(*prio)
	if err != nil {
		return err
	}
	req := &hubv1.PostMessageRequest{Channel: *channel, ReplyTo: *replyTo, Mentions: mentions, Priority: p, AckRequired: *ack, Project: *project}
	for _, t := range to {
		if strings.HasPrefix(t, "#") || strings.Contains(t, "/#") {
			if req.Channel != "" && req.Channel != t {
				return usageErrorf("one channel per message: got %s and %s", req.Channel, t)
			}
			req.Channel = t
			continue
		}
		req.To = append(req.To, t)
	}
	if req.Channel != "" && !strings.Contains(req.Channel, "#") {
		req.Channel = "#" + req.Channel
	}
	if len(req.To) == 0 && req.Channel == "" {
		return usageErrorf("give a recipient with --to NAME or --to '#channel'")
	}
	text := strings.Join(pos, " ")
	if len(pos) == 1 && pos[0] == "-" {
		b, err := io.ReadAll(c.in)
		if err != nil {
			return fmt.Errorf("read the message from stdin: %w", err)
		}
		text = strings.TrimRight(string(b), "\n")
	}
	if strings.TrimSpace(text) == "" {
		return usageErrorf("give the message TEXT (or - to read it from stdin)")
	}
	req.Body = text
	r, err := c.asAdmin.PostMessage(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	m := r.GetMessage()
	fmt.Fprintf(c.out, "Sent message %s to %s.\n", m.GetId(), recipients(m))
	if note := r.GetDeliveryNote(); note != "" {
		fmt.Fprintln(c.out, note)
	}
	return nil
}

// sender is "pat (person)", "bob (agent)": the sender's name and the kind
// of principal the hub recorded when the message was posted.
func sender(m *hubv1.Message) string {
	kind := "unknown"
	if k := m.GetSenderKind(); k != hubv1.SenderKind_SENDER_KIND_UNSPECIFIED {
		kind = strings.ToLower(strings.TrimPrefix(k.String(), "SENDER_KIND_"))
	}
	return m.GetFrom() + " (" + kind + ")"
}

// recipients is "bob, carol, #ops".
func recipients(m *hubv1.Message) string {
	r := append([]string(nil), m.GetTo()...)
	if m.GetChannel() != "" {
		r = append(r, m.GetChannel())
	}
	if len(r) == 0 {
		return "-"
	}
	return strings.Join(r, ", ")
}

// pageLimit is the page size when reading through messages.
const pageLimit = 500

func runMessages(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("messages")
	agent := fs.String("agent", "", "only messages delivered to this agent")
	channel := fs.String("channel", "", "only this channel (#name, or project/#name)")
	project := fs.String("project", "", "only this project's messages")
	after := fs.String("after", "", "only messages after this ID (the cursor); default: the newest --limit")
	limit := fs.Int("limit", 20, "how many messages to show (before following)")
	follow := fs.Bool("follow", false, "keep printing new messages as they arrive (polls every --interval) until Ctrl-C")
	interval := fs.Duration("interval", time.Second, "poll period with --follow")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("messages takes flags only, got %q", pos)
	}
	if *limit < 1 {
		return usageErrorf("--limit %d: give 1 or more", *limit)
	}
	if *interval <= 0 {
		return usageErrorf("--interval %v: give a positive duration such as 1s", *interval)
	}
	if *channel != "" && !strings.HasPrefix(*channel, "#") {
		*channel = "#" + *channel
	}
	q := &hubv1.ListMessagesRequest{AfterId: *after, Agent: *agent, Channel: *channel, Project: *project}
	msgs, cursor, err := c.tail(ctx, q, *limit, *after != "")
	if err != nil {
		return err
	}
	if !*follow {
		if c.json {
			return c.printProto(&hubv1.ListMessagesResponse{Messages: msgs, Cursor: cursor})
		}
		if len(msgs) == 0 {
			fmt.Fprintln(c.out, "No messages.")
			return nil
		}
		c.table([]string{"ID", "TIME", "FROM", "TO", "BODY"}, messageRows(msgs))
		return nil
	}

	if err := c.printMessageLines(msgs); err != nil {
		return err
	}
	t := time.NewTicker(*interval)
	defer t.Stop()
	unreachable := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		q.AfterId, q.Limit = cursor, pageLimit
		r, err := c.asAdmin.ListMessages(ctx, q)
		switch {
		case ctx.Err() != nil:
			return nil
		case status.Code(err) == codes.Unavailable:
			if !unreachable {
				fmt.Fprintf(c.errOut, "hubctl messages: %s\n  (retrying every %v)\n", c.explain(err), *interval)
			}
			unreachable = true
			continue
		case err != nil:
			return err
		}
		if unreachable {
			fmt.Fprintln(c.errOut, "hubctl messages: reconnected")
			unreachable = false
		}
		if err := c.printMessageLines(r.GetMessages()); err != nil {
			return err
		}
		if r.GetCursor() != "" {
			cursor = r.GetCursor()
		}
	}
}

// tail reads messages matching q: with fromCursor, the first limit after
// q.AfterId; else the newest limit (reading forward through all of them,
// since the API lists oldest first). It returns them and the cursor.
func (c *cli) tail(ctx context.Context, q *hubv1.ListMessagesRequest, limit int, fromCursor bool) ([]*hubv1.Message, string, error) {
	var out []*hubv1.Message
	cursor := q.GetAfterId()
	for {
		q.AfterId = cursor
		q.Limit = pageLimit
		if fromCursor {
			q.Limit = int32(min(limit-len(out), pageLimit))
		}
		r, err := c.asAdmin.ListMessages(ctx, q)
		if err != nil {
			return nil, "", err
		}
		out = append(out, r.GetMessages()...)
		if len(out) > limit && !fromCursor {
			out = append(out[:0:0], out[len(out)-limit:]...)
		}
		if r.GetCursor() != "" {
			cursor = r.GetCursor()
		}
		if !r.GetHasMore() || len(r.GetMessages()) == 0 || (fromCursor && len(out) >= limit) {
			return out, cursor, nil
		}
	}
}

func messageRows(msgs []*hubv1.Message) [][]string {
	rows := make([][]string, 0, len(msgs))
	for _, m := range msgs {
		rows = append(rows, []string{m.GetId(), fmtTime(m.GetCreatedAt()), sender(m), recipients(m), truncate(bodyLine(m), 200)})
	}
	return rows
}

// bodyLine is the body with its kind and thread shown in front. The kind
// is left out when the body already begins with it, as cron messages do
// ("[cron NAME] …"), so it is not said twice.
func bodyLine(m *hubv1.Message) string {
	var b strings.Builder
	if k := m.GetKind(); k != "" && k != "message" && !strings.HasPrefix(m.GetBody(), "["+k) {
		b.WriteString("[" + k + "] ")
	}
	if m.GetReplyTo() != "" {
		b.WriteString("(re " + m.GetReplyTo() + ") ")
	}
	b.WriteString(m.GetBody())
	return b.String()
}

// printMessageLines prints messages one per line (JSON lines with -o json).
func (c *cli) printMessageLines(msgs []*hubv1.Message) error {
	for _, m := range msgs {
		if c.json {
			if err := c.printJSONLine(m); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(c.out, "%s  %s  %s → %s: %s\n", m.GetId(), fmtTime(m.GetCreatedAt()), sender(m), recipients(m), oneLine(bodyLine(m)))
	}
	return nil
}
