package server

import (
	"context"
	"strconv"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// Handlers of path reservations (agents) and their administration.

// ReservePaths implements hubv1.AgentServiceServer: for the agent itself,
// or for the agent the admin names.
func (a *AgentServer) ReservePaths(ctx context.Context, req *hubv1.ReservePathsRequest) (*hubv1.ReservePathsResponse, error) {
	r, err := reservationRequest(req.GetPaths(), req.GetMode(), req.GetTtlSeconds(), req.GetReason())
	if err != nil {
		return nil, err
	}
	if err := adminField(ctx, "agent", req.GetAgent() != ""); err != nil {
		return nil, err
	}
	var rs []*hub.Reservation
	var cs []hub.Conflict
	if caller := Caller(ctx); caller != nil {
		rs, cs, err = a.s.svc.Reservations.ReservePaths(ctx, caller, r)
	} else {
		if req.GetAgent() == "" {
			return nil, hub.Errorf(hub.EINVALID, "agent is empty: the admin names the agent the reservations are for")
		}
		rs, cs, err = a.s.svc.Reservations.ReservePathsFor(ctx, req.GetAgent(), r)
	}
	if err != nil {
		return nil, err
	}
	return &hubv1.ReservePathsResponse{Reservations: reservationsToProto(rs), Conflicts: conflictsToProto(cs)}, nil
}

// reservationRequest converts the fields of a reservation request; the
// domain checks them.
func reservationRequest(paths []string, mode string, ttlSecs int64, reason string) (hub.ReservationRequest, error) {
	ttl, err := ttlSeconds(ttlSecs)
	if err != nil {
		return hub.ReservationRequest{}, err
	}
	return hub.ReservationRequest{Patterns: paths, Mode: hub.ReservationMode(mode), TTL: ttl, Reason: reason}, nil
}

// RenewReservations implements hubv1.AgentServiceServer.
func (a *AgentServer) RenewReservations(ctx context.Context, req *hubv1.RenewReservationsRequest) (*hubv1.RenewReservationsResponse, error) {
	ttl, err := ttlSeconds(req.GetTtlSeconds())
	if err != nil {
		return nil, err
	}
	ids, err := reservationIDs(req.GetIds())
	if err != nil {
		return nil, err
	}
	rs, err := a.s.svc.Reservations.RenewReservations(ctx, Caller(ctx), ids, ttl)
	if err != nil {
		return nil, err
	}
	return &hubv1.RenewReservationsResponse{Reservations: reservationsToProto(rs)}, nil
}

// ReleasePaths implements hubv1.AgentServiceServer.
func (a *AgentServer) ReleasePaths(ctx context.Context, req *hubv1.ReleasePathsRequest) (*hubv1.ReleasePathsResponse, error) {
	ids, err := reservationIDs(req.GetIds())
	if err != nil {
		return nil, err
	}
	rs, err := a.s.svc.Reservations.ReleasePaths(ctx, Caller(ctx), ids, req.GetPaths())
	if err != nil {
		return nil, err
	}
	return &hubv1.ReleasePathsResponse{Released: reservationsToProto(rs)}, nil
}

// ListReservations implements hubv1.AgentServiceServer.
func (a *AgentServer) ListReservations(ctx context.Context, req *hubv1.ListReservationsRequest) (*hubv1.ListReservationsResponse, error) {
	project, err := callerProject(ctx, req.GetProject())
	if err != nil {
		return nil, err
	}
	rs, err := a.s.svc.Reservations.ListReservations(ctx, hub.ReservationFilter{
		Project: project, Agent: req.GetAgent(), Paths: req.GetPaths(),
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.ListReservationsResponse{Reservations: reservationsToProto(rs)}, nil
}

// ForceReleaseReservation implements hubv1.AdminServiceServer.
func (a *AdminServer) ForceReleaseReservation(ctx context.Context, req *hubv1.ForceReleaseReservationRequest) (*hubv1.ForceReleaseReservationResponse, error) {
	ids, err := reservationIDs([]string{req.GetId()})
	if err != nil {
		return nil, err
	}
	r, err := a.s.svc.Reservations.ForceReleaseReservation(ctx, ids[0], req.GetReason())
	if err != nil {
		return nil, err
	}
	return &hubv1.ForceReleaseReservationResponse{Released: reservationToProto(r)}, nil
}

// ttlSeconds converts a lease in seconds; the domain checks its range.
func ttlSeconds(n int64) (time.Duration, error) {
	if n < 0 || n > int64(hub.MaxReservationTTL/time.Second) {
		return 0, hub.Errorf(hub.EINVALID, "ttl_seconds %d is out of range: expected %d to %d, or 0 for the default %d",
			n, int64(hub.MinReservationTTL/time.Second), int64(hub.MaxReservationTTL/time.Second), int64(hub.DefaultReservationTTL/time.Second))
	}
	return time.Duration(n) * time.Second, nil
}

// reservationIDs parses reservation IDs.
func reservationIDs(ss []string) ([]int64, error) {
	out := make([]int64, len(ss))
	for i, s := range ss {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return nil, hub.Errorf(hub.EINVALID, "reservation ID %q is not valid: expected a positive decimal number such as \"12\" (the id list_reservations shows)", s)
		}
		out[i] = id
	}
	return out, nil
}

func reservationToProto(r *hub.Reservation) *hubv1.Reservation {
	return &hubv1.Reservation{
		Id: strconv.FormatInt(r.ID, 10), Agent: r.AgentName, Pattern: r.Pattern, Mode: string(r.Mode),
		Reason: r.Reason, CreatedAt: ts(r.CreatedAt), ExpiresAt: ts(r.ExpiresAt), Project: hub.ProjectOr(r.Project),
	}
}

func conflictsToProto(cs []hub.Conflict) []*hubv1.ReservationConflict {
	out := make([]*hubv1.ReservationConflict, len(cs))
	for i, c := range cs {
		out[i] = &hubv1.ReservationConflict{Pattern: c.Pattern, Held: reservationToProto(c.Held), Refusing: c.Refusing}
	}
	return out
}

func reservationsToProto(rs []*hub.Reservation) []*hubv1.Reservation {
	out := make([]*hubv1.Reservation, len(rs))
	for i, r := range rs {
		out[i] = reservationToProto(r)
	}
	return out
}
