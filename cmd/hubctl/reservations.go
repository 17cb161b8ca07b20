package main

import (
	"context"
	"fmt"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// reservationsList shows the active path reservations: `hubctl
// reservations [list] [--agent NAME] [PATH...]`.
func reservationsList(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("reservations list")
	agent := fs.String("agent", "", "only this agent's reservations")
	project := fs.String("project", "", "only this project's reservations")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	r, err := c.asAdmin.ListReservations(ctx, &hubv1.ListReservationsRequest{Agent: *agent, Paths: pos, Project: *project})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetReservations()) == 0 {
		fmt.Fprintln(c.out, "no reservations")
		return nil
	}
	rows := make([][]string, 0, len(r.GetReservations()))
	for _, v := range r.GetReservations() {
		rows = append(rows, []string{v.GetId(), v.GetAgent(), v.GetPattern(), v.GetMode(), fmtTime(v.GetExpiresAt()), dash(truncate(v.GetReason(), 60))})
	}
	c.table([]string{"ID", "AGENT", "PATTERN", "MODE", "EXPIRES", "REASON"}, rows)
	return nil
}

// reservationsRelease force-releases reservations by ID, recording an event
// on each holder: `hubctl reservations release ID... [--reason TEXT]`.
func reservationsRelease(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("reservations release")
	reason := fs.String("reason", "", "why (recorded in the holder's reservation_released event)")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("give one or more reservation IDs (hubctl reservations list shows them)")
	}
	var done []*hubv1.Reservation
	for _, id := range pos {
		r, err := c.admin.ForceReleaseReservation(ctx, &hubv1.ForceReleaseReservationRequest{Id: id, Reason: *reason})
		if err != nil {
			return fmt.Errorf("release %s: %w", id, err)
		}
		done = append(done, r.GetReleased())
		if !c.json {
			fmt.Fprintf(c.out, "released %s: %s (%s) of %s\n", id, r.GetReleased().GetPattern(), r.GetReleased().GetMode(), r.GetReleased().GetAgent())
		}
	}
	if c.json {
		return c.printProto(&hubv1.ListReservationsResponse{Reservations: done})
	}
	return nil
}

// reservationsReserve reserves paths for an agent, the whole project
// included: `hubctl reservations reserve --agent NAME [--shared] [--ttl D]
// [--reason TEXT] PATH...`.
func reservationsReserve(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("reservations reserve")
	agent := fs.String("agent", "", "the agent the reservations are for (required)")
	shared := fs.Bool("shared", false, "reserve shared (others may work there too) instead of exclusive")
	ttl := fs.Duration("ttl", 30*time.Minute, "lease, 10s to 24h; the agent renews it as its own")
	reason := fs.String("reason", "", "why, shown to the agents it conflicts with")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if *agent == "" || len(pos) == 0 {
		return usageErrorf("give --agent NAME and one or more paths, such as ** for the whole project")
	}
	mode := "exclusive"
	if *shared {
		mode = "shared"
	}
	r, err := c.asAdmin.ReservePaths(ctx, &hubv1.ReservePathsRequest{Agent: *agent, Paths: pos, Mode: mode, TtlSeconds: int64(ttl.Seconds()), Reason: *reason})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	for _, v := range r.GetReservations() {
		fmt.Fprintf(c.out, "reserved %s: %s (%s) for %s until %s\n", v.GetId(), v.GetPattern(), v.GetMode(), v.GetAgent(), fmtTime(v.GetExpiresAt()))
	}
	for _, cf := range r.GetConflicts() {
		h := cf.GetHeld()
		fmt.Fprintf(c.out, "overlaps %s (%s) of %s until %s\n", h.GetPattern(), h.GetMode(), h.GetAgent(), fmtTime(h.GetExpiresAt()))
	}
	return nil
}
