package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// Reservation is one path reservation as the tools return it.
type Reservation struct {
	ID        string `json:"id"`
	Agent     string `json:"agent"`
	Pattern   string `json:"pattern"`
	Mode      string `json:"mode"`
	Reason    string `json:"reason,omitempty"`
	ExpiresAt string `json:"expires_at"`
}

// ReservationConflict is another agent's reservation overlapping a request.
type ReservationConflict struct {
	Pattern string      `json:"pattern"`
	Held    Reservation `json:"held"`
}

// ReservationsOutput is what the reservation tools return.
type ReservationsOutput struct {
	Reservations []Reservation         `json:"reservations"`
	Conflicts    []ReservationConflict `json:"conflicts,omitempty"`
}

func fromReservations(rs []*hubv1.Reservation) []Reservation {
	out := make([]Reservation, len(rs))
	for i, r := range rs {
		out[i] = fromReservation(r)
	}
	return out
}

func fromReservation(r *hubv1.Reservation) Reservation {
	return Reservation{ID: r.GetId(), Agent: r.GetAgent(), Pattern: r.GetPattern(), Mode: r.GetMode(), Reason: r.GetReason(), ExpiresAt: formatTime(r.GetExpiresAt())}
}

// renderReservations writes one line per reservation.
func renderReservations(sb *strings.Builder, rs []Reservation) {
	for _, r := range rs {
		fmt.Fprintf(sb, "\n[%s] %s %s by %s until %s", r.ID, r.Pattern, r.Mode, r.Agent, r.ExpiresAt)
		if r.Reason != "" {
			fmt.Fprintf(sb, " (%s)", r.Reason)
		}
	}
}

// ReservePathsInput is the input of reserve_paths.
type ReservePathsInput struct {
	Paths  []string `json:"paths" jsonschema:"globs from repo root: src/, **/*.go"`
	Mode   string   `json:"mode,omitempty"`
	TTL    int      `json:"ttl_seconds,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

func reservePathsTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "reserve_paths",
		Description: "Claim paths before editing (again to renew). Overlaps are named; exclusive over exclusive is refused.",
	}
	shape := func(p map[string]*jsonschema.Schema) {
		enum(p["mode"], "exclusive", "shared")
	}
	addTool(s, b, t, shape, func(ctx context.Context, _ *mcp.CallToolRequest, in ReservePathsInput) (string, ReservationsOutput, error) {
		r, err := b.client.ReservePaths(ctx, &hubv1.ReservePathsRequest{Paths: in.Paths, Mode: in.Mode, TtlSeconds: int64(in.TTL), Reason: in.Reason})
		if err != nil {
			return "", ReservationsOutput{}, err
		}
		out := ReservationsOutput{Reservations: fromReservations(r.GetReservations())}
		var sb strings.Builder
		sb.WriteString("Reserved:")
		renderReservations(&sb, out.Reservations)
		for _, c := range r.GetConflicts() {
			rc := ReservationConflict{Pattern: c.GetPattern(), Held: fromReservation(c.GetHeld())}
			out.Conflicts = append(out.Conflicts, rc)
			fmt.Fprintf(&sb, "\nOverlap: %s with %s %s by %s until %s", rc.Pattern, rc.Held.Pattern, rc.Held.Mode, rc.Held.Agent, rc.Held.ExpiresAt)
		}
		return sb.String(), out, nil
	})
}

// ReleasePathsInput is the input of release_paths.
type ReleasePathsInput struct {
	IDs   []ID     `json:"ids,omitempty"`
	Paths []string `json:"paths,omitempty"`
}

func releasePathsTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{Name: "release_paths", Description: "Release your reservations (none given: all)."}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in ReleasePathsInput) (string, ReservationsOutput, error) {
		r, err := b.client.ReleasePaths(ctx, &hubv1.ReleasePathsRequest{Ids: idStrings(in.IDs), Paths: in.Paths})
		if err != nil {
			return "", ReservationsOutput{}, err
		}
		out := ReservationsOutput{Reservations: fromReservations(r.GetReleased())}
		var sb strings.Builder
		sb.WriteString("Released " + plural(int64(len(out.Reservations)), "reservation", "reservations") + ".")
		renderReservations(&sb, out.Reservations)
		return sb.String(), out, nil
	})
}

// ListReservationsInput is the input of list_reservations.
type ListReservationsInput struct {
	Holder string   `json:"holder,omitempty"`
	Paths  []string `json:"paths,omitempty"`
}

func listReservationsTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{Name: "list_reservations", Description: "Who holds which paths, how and until when.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in ListReservationsInput) (string, ReservationsOutput, error) {
		r, err := b.client.ListReservations(ctx, &hubv1.ListReservationsRequest{Agent: in.Holder, Paths: in.Paths})
		if err != nil {
			return "", ReservationsOutput{}, err
		}
		out := ReservationsOutput{Reservations: fromReservations(r.GetReservations())}
		if len(out.Reservations) == 0 {
			return "No reservations.", out, nil
		}
		var sb strings.Builder
		sb.WriteString(plural(int64(len(out.Reservations)), "reservation", "reservations") + ":")
		renderReservations(&sb, out.Reservations)
		return sb.String(), out, nil
	})
}

// idStrings converts tool IDs to the API's strings.
func idStrings(ids []ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}
