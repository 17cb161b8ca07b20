package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Many agents race for the same glob over real loopback connections: the
// decision is taken inside the store's write transaction, so exactly one
// gets the exclusive reservation and every other one is refused naming it.
func TestReservePathsRaceHasOneWinner(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	const n = 32
	ctxs := make([]context.Context, n)
	for i := range ctxs {
		ctxs[i], _ = r.newAgent(t, fmt.Sprintf("racer-%02d", i))
	}
	conns := []hubv1.AgentServiceClient{hubv1.NewAgentServiceClient(r.loopback(t)), hubv1.NewAgentServiceClient(r.loopback(t))}
	for round, glob := range []string{"internal/**/*.go", "src/"} {
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = conns[i%2].ReservePaths(ctxs[i], &hubv1.ReservePathsRequest{Paths: []string{glob}, Reason: "race"})
			}()
		}
		close(start)
		wg.Wait()
		winners, refused := 0, 0
		for _, err := range errs {
			switch status.Code(err) {
			case codes.OK:
				winners++
			case codes.FailedPrecondition:
				refused++
			default:
				t.Errorf("round %d: unexpected error %v", round, err)
			}
		}
		if winners != 1 || refused != n-1 {
			t.Fatalf("round %d (%s): %d winners, %d refused; want exactly 1 and %d", round, glob, winners, refused, n-1)
		}
		list, err := r.agent.ListReservations(r.adm, &hubv1.ListReservationsRequest{Paths: []string{glob}})
		if err != nil || len(list.GetReservations()) != 1 {
			t.Fatalf("round %d: %d reservations stored (%v), want 1", round, len(list.GetReservations()), err)
		}
		winner := list.GetReservations()[0]
		for _, err := range errs {
			if err != nil {
				wantStatus(t, "loser", err, codes.FailedPrecondition, winner.GetAgent())
			}
		}
		// An admin force-release frees the glob for the next round.
		if _, err := r.admin.ForceReleaseReservation(r.adm, &hubv1.ForceReleaseReservationRequest{Id: winner.GetId(), Reason: "next round"}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReservationsAPI(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	alice, _ := r.newAgent(t, "alice")
	bob, _ := r.newAgent(t, "bob")
	res, err := r.agent.ReservePaths(alice, &hubv1.ReservePathsRequest{Paths: []string{"cmd/", "docs/*.md"}, TtlSeconds: 600, Reason: "refactor"})
	if err != nil || len(res.GetReservations()) != 2 {
		t.Fatalf("ReservePaths = %v, %v", res, err)
	}
	shared, err := r.agent.ReservePaths(bob, &hubv1.ReservePathsRequest{Paths: []string{"cmd/hub/main.go"}, Mode: "shared"})
	if err != nil || len(shared.GetConflicts()) != 1 || shared.GetConflicts()[0].GetHeld().GetAgent() != "alice" {
		t.Fatalf("shared over alice's exclusive = %v, %v; want granted naming alice", shared, err)
	}
	for _, tc := range []struct {
		what string
		req  *hubv1.ReservePathsRequest
		text string
	}{
		{"dot-dot", &hubv1.ReservePathsRequest{Paths: []string{"../etc"}}, ".."},
		{"absolute", &hubv1.ReservePathsRequest{Paths: []string{"/etc"}}, "absolute"},
		{"no paths", &hubv1.ReservePathsRequest{}, "required"},
		{"mode", &hubv1.ReservePathsRequest{Paths: []string{"x"}, Mode: "readonly"}, "exclusive or shared"},
		{"ttl", &hubv1.ReservePathsRequest{Paths: []string{"x"}, TtlSeconds: 5}, "10"},
	} {
		_, err := r.agent.ReservePaths(bob, tc.req)
		wantStatus(t, tc.what, err, codes.InvalidArgument, tc.text)
	}
	list, err := r.agent.ListReservations(bob, &hubv1.ListReservationsRequest{Agent: "alice"})
	if err != nil || len(list.GetReservations()) != 2 {
		t.Fatalf("bob lists alice's = %v, %v; want 2", list, err)
	}
	_, err = r.agent.RenewReservations(bob, &hubv1.RenewReservationsRequest{Ids: []string{list.GetReservations()[0].GetId()}})
	wantStatus(t, "bob renews alice's", err, codes.NotFound, "not an active reservation of yours")
	_, err = r.agent.RenewReservations(bob, &hubv1.RenewReservationsRequest{Ids: []string{"x"}})
	wantStatus(t, "bad id", err, codes.InvalidArgument, "positive decimal")
	rel, err := r.agent.ReleasePaths(alice, &hubv1.ReleasePathsRequest{Paths: []string{"cmd"}})
	if err != nil || len(rel.GetReleased()) != 1 || rel.GetReleased()[0].GetPattern() != "cmd" {
		t.Fatalf("ReleasePaths = %v, %v", rel, err)
	}
	_, err = hubv1.NewAdminServiceClient(r.conn).ForceReleaseReservation(alice, &hubv1.ForceReleaseReservationRequest{Id: "1"})
	wantStatus(t, "agent force-releases", err, codes.PermissionDenied, "admin token")
}

// The whole project exclusively is the admin's: an agent is refused with
// PermissionDenied naming how, the admin reserves it for the agent, and
// an agent's token cannot call the admin's ReservePaths.
func TestWholeProjectReservationIsTheAdmins(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	alice, _ := r.newAgent(t, "alice")
	_, err := r.agent.ReservePaths(alice, &hubv1.ReservePathsRequest{Paths: []string{"**"}})
	wantStatus(t, "agent reserves ** exclusively", err, codes.PermissionDenied, "hubctl reservations reserve --agent")
	if _, err := r.agent.ReservePaths(alice, &hubv1.ReservePathsRequest{Paths: []string{"**"}, Mode: "shared"}); err != nil {
		t.Errorf("agent reserves ** shared: %v", err)
	}
	_, err = r.agent.ReservePaths(alice, &hubv1.ReservePathsRequest{Agent: "alice", Paths: []string{"**"}})
	wantStatus(t, "an agent naming the agent as the admin does", err, codes.PermissionDenied, "agent is the admin's to give")
	res, err := r.agent.ReservePaths(r.adm, &hubv1.ReservePathsRequest{Agent: "alice", Paths: []string{"."}, TtlSeconds: 600, Reason: "freeze"})
	if err != nil || len(res.GetReservations()) != 1 || res.GetReservations()[0].GetPattern() != "**" || res.GetReservations()[0].GetMode() != "exclusive" {
		t.Fatalf("admin reserves . for alice = %v, %v; want ** exclusive (renewing her shared one)", res, err)
	}
	_, err = r.agent.ReservePaths(r.adm, &hubv1.ReservePathsRequest{Agent: "nobody", Paths: []string{"**"}})
	wantStatus(t, "unknown agent", err, codes.NotFound, "nobody")
	_, err = r.agent.ReservePaths(r.adm, &hubv1.ReservePathsRequest{Agent: "alice", Paths: []string{"x"}, TtlSeconds: -1})
	wantStatus(t, "negative ttl", err, codes.InvalidArgument, "ttl_seconds")
	_, err = r.agent.ReservePaths(r.adm, &hubv1.ReservePathsRequest{Agent: "alice", Paths: []string{"a*b*c*d*e*f"}})
	wantStatus(t, "six stars", err, codes.InvalidArgument, "the limit is 4 per segment")
}
