package main

import (
	"context"
	"fmt"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// agentDelete deletes a disabled agent and all its data
// (AdminService.DeleteAgent), only when --yes says so.
func agentDelete(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("agent delete")
	yes := fs.Bool("yes", false, "really delete: the agent, its token and all its data (messages it sent included) are gone for good")
	name, err := c.oneName(fs, args, "agent")
	if err != nil {
		return err
	}
	if !*yes {
		return usageErrorf("deleting agent %s removes it and all its data for good (the messages it sent, its logs, checkpoints, events, receipts...): run `hubctl agent delete %s --yes` to do it (disable it first with `hubctl agent disable %s`)", name, name, name)
	}
	r, err := c.admin.DeleteAgent(ctx, &hubv1.DeleteAgentRequest{Name: name})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "Deleted agent %s with %d messages it sent and %d other rows; the name is free.\n",
		r.GetAgent().GetName(), r.GetMessagesDeleted(), r.GetRowsDeleted())
	return nil
}
