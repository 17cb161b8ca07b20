package server_test

import (
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
)

// TestOneRPCForAgentsAndAdmin: a call agents and the admin both make is
// one RPC whose caller comes from the token. An agent acts as itself, in
// its own project, and may not name another project; the admin reads
// every project, or the one it names.
func TestOneRPCForAgentsAndAdmin(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	if _, err := r.admin.CreateProject(r.adm, &hubv1.CreateProjectRequest{Name: "other"}); err != nil {
		t.Fatal(err)
	}
	alice, _ := r.newAgent(t, "alice")
	res, err := r.admin.CreateAgent(r.adm, &hubv1.CreateAgentRequest{Name: "carol", Project: "other"})
	if err != nil {
		t.Fatal(err)
	}
	carol := withToken(t.Context(), res.GetToken())
	mine, err := r.agent.CreateTask(alice, &hubv1.CreateTaskRequest{Task: &hubv1.TaskSpec{Title: "alice's"}})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := r.agent.CreateTask(carol, &hubv1.CreateTaskRequest{Task: &hubv1.TaskSpec{Title: "carol's"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.agent.CreateTask(alice, &hubv1.CreateTaskRequest{Project: "other", Task: &hubv1.TaskSpec{Title: "on carol's board"}})
	wantStatus(t, "alice creates a task on another board", err, codes.PermissionDenied, "project is the admin's to give")

	// ListTasks: the agent's project; every project or the one named for the admin.
	list, err := r.agent.ListTasks(alice, &hubv1.ListTasksRequest{})
	if err != nil || len(list.GetTasks()) != 1 || list.GetTasks()[0].GetId() != mine.GetTask().GetId() {
		t.Errorf("alice's list: %v, %v; want her task only", list.GetTasks(), err)
	}
	_, err = r.agent.ListTasks(alice, &hubv1.ListTasksRequest{Project: "other"})
	wantStatus(t, "alice names a project", err, codes.PermissionDenied, "project is the admin's to give")
	all, err := r.agent.ListTasks(r.adm, &hubv1.ListTasksRequest{})
	if err != nil || len(all.GetTasks()) != 2 {
		t.Errorf("the admin's list: %v, %v; want both projects' tasks", all.GetTasks(), err)
	}
	other, err := r.agent.ListTasks(r.adm, &hubv1.ListTasksRequest{Project: "other"})
	if err != nil || len(other.GetTasks()) != 1 || other.GetTasks()[0].GetId() != theirs.GetTask().GetId() {
		t.Errorf("the admin's list of other: %v, %v; want carol's task", other.GetTasks(), err)
	}
	if made, err := r.agent.CreateTask(r.adm, &hubv1.CreateTaskRequest{Project: "other", Task: &hubv1.TaskSpec{Title: "the admin's"}}); err != nil || made.GetTask().GetProject() != "other" {
		t.Errorf("the admin creates a task on other's board: %v, %v", made, err)
	}

	// GetTask: another project's task is not the agent's to see; the admin sees any.
	_, err = r.agent.GetTask(alice, &hubv1.GetTaskRequest{Id: theirs.GetTask().GetId()})
	wantStatus(t, "alice reads carol's task", err, codes.NotFound, "")
	if got, err := r.agent.GetTask(r.adm, &hubv1.GetTaskRequest{Id: theirs.GetTask().GetId()}); err != nil || got.GetTask().GetTitle() != "carol's" {
		t.Errorf("the admin reads carol's task: %v, %v", got, err)
	}

	// ListReservations and ListChannels: the same rule for the project.
	if _, err := r.agent.ReservePaths(carol, &hubv1.ReservePathsRequest{Paths: []string{"docs/"}}); err != nil {
		t.Fatal(err)
	}
	_, err = r.agent.ListReservations(alice, &hubv1.ListReservationsRequest{Project: "other"})
	wantStatus(t, "alice lists another project's reservations", err, codes.PermissionDenied, "project is the admin's to give")
	if rs, err := r.agent.ListReservations(alice, &hubv1.ListReservationsRequest{}); err != nil || len(rs.GetReservations()) != 0 {
		t.Errorf("alice's reservations: %v, %v; want none of carol's", rs.GetReservations(), err)
	}
	if rs, err := r.agent.ListReservations(r.adm, &hubv1.ListReservationsRequest{Project: "other"}); err != nil || len(rs.GetReservations()) != 1 {
		t.Errorf("the admin's reservations of other: %v, %v; want carol's", rs.GetReservations(), err)
	}
	_, err = r.agent.ListChannels(alice, &hubv1.ListChannelsRequest{Project: "other"})
	wantStatus(t, "alice lists another project's channels", err, codes.PermissionDenied, "project is the admin's to give")
	if _, err := r.agent.ListChannels(r.adm, &hubv1.ListChannelsRequest{Project: "other"}); err != nil {
		t.Errorf("the admin lists other's channels: %v", err)
	}
}
