package main

import (
	"context"
	"fmt"
	"strings"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// priorityFlag maps --priority names to the API's values.
var priorityFlag = map[string]hubv1.Priority{
	"low": hubv1.Priority_PRIORITY_LOW, "normal": hubv1.Priority_PRIORITY_NORMAL,
	"high": hubv1.Priority_PRIORITY_HIGH, "urgent": hubv1.Priority_PRIORITY_URGENT,
}

// parsePriority returns the API value of a --priority name ("" is normal).
func parsePriority(s string) (hubv1.Priority, error) {
	if s == "" {
		return hubv1.Priority_PRIORITY_NORMAL, nil
	}
	p, ok := priorityFlag[strings.ToLower(s)]
	if !ok {
		return 0, usageErrorf("--priority %q: give one of low, normal, high, urgent", s)
	}
	return p, nil
}

// priorityName is a message's priority as hubctl shows it.
func priorityName(p hubv1.Priority) string {
	for n, v := range priorityFlag {
		if v == p {
			return n
		}
	}
	return "normal"
}

// runShowMessage shows one message and, per recipient, where it is
// (queued, in context and through which path, read, acknowledged) and when
// it was delivered, taken into context, read and acknowledged.
func runShowMessage(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("messages show")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("give one message ID")
	}
	r, err := c.asAdmin.GetMessageReceipts(ctx, &hubv1.GetMessageReceiptsRequest{Id: pos[0]})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	m := r.GetMessage()
	ack := "no"
	if m.GetAckRequired() {
		ack = "required"
	}
	c.fields(
		"ID", m.GetId(),
		"From", sender(m),
		"To", recipients(m),
		"Time", fmtTime(m.GetCreatedAt()),
		"Kind", m.GetKind(),
		"Priority", priorityName(m.GetPriority()),
		"Acknowledgement", ack,
		"Reply to", m.GetReplyTo(),
		"Body", oneLine(m.GetBody()),
	)
	if len(r.GetReceipts()) == 0 {
		fmt.Fprintln(c.out, "\nNo recipients.")
		return nil
	}
	fmt.Fprintln(c.out)
	rows := make([][]string, 0, len(r.GetReceipts()))
	for _, rc := range r.GetReceipts() {
		read := "-"
		switch {
		case rc.GetReadAt() != nil:
			read = fmtTime(rc.GetReadAt())
		case rc.GetRead():
			read = "yes (time not kept)"
		}
		inContext := fmtTime(rc.GetInContextAt())
		if rc.GetVia() != "" {
			inContext += " via " + rc.GetVia()
		}
		rows = append(rows, []string{rc.GetAgent(), dash(rc.GetState()), fmtTime(rc.GetDeliveredAt()), inContext, read, fmtTime(rc.GetAckedAt())})
	}
	c.table([]string{"RECIPIENT", "STATE", "DELIVERED", "IN CONTEXT", "READ", "ACKNOWLEDGED"}, rows)
	return nil
}
