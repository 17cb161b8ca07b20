package server

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// Handlers of the task board (agents) and its administration.

func taskToProto(t *hub.Task) *hubv1.Task {
	if t == nil {
		return nil
	}
	out := &hubv1.Task{
		Id: hub.FormatTaskID(t.ID), Project: t.Project, Title: t.Title, Description: t.Description, State: string(t.State),
		Ready: t.Ready(), Priority: hubv1.Priority(t.Priority), Labels: t.Labels, Role: t.Role, Creator: t.Creator,
		Assignee: t.Assignee, DependsOn: taskIDsToProto(t.DependsOn), Paths: t.Paths, ThreadId: hub.FormatMessageID(t.ThreadID),
		CreatedAt: ts(t.CreatedAt), ClaimedAt: ts(t.ClaimedAt), DoneAt: ts(t.DoneAt), UpdatedAt: ts(t.UpdatedAt), Result: t.Result,
		Dependents: taskIDsToProto(t.Dependents),
	}
	if t.State == hub.TaskClaimed {
		out.LeaseUntil = ts(t.LeaseDue)
	} else {
		out.Assignee = ""
		if t.State == hub.TaskDone || t.State == hub.TaskBlocked {
			out.Assignee = t.Assignee // who did it, or who hit the block
		}
	}
	for _, c := range t.Checkpoints {
		out.Checkpoints = append(out.Checkpoints, &hubv1.Checkpoint{Id: hub.FormatMessageID(c.ID), Agent: t.Assignee,
			CurrentActivity: c.CurrentActivity, HeartbeatId: c.HeartbeatID, CreatedAt: ts(c.CreatedAt)})
	}
	return out
}

func tasksToProto(ts []*hub.Task) []*hubv1.Task {
	out := make([]*hubv1.Task, len(ts))
	for i, t := range ts {
		out[i] = taskToProto(t)
	}
	return out
}

func taskIDsToProto(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = hub.FormatTaskID(id)
	}
	return out
}

func taskIDs(field string, ss []string) ([]int64, error) {
	out := make([]int64, len(ss))
	for i, s := range ss {
		id, err := hub.ParseTaskID(field, s)
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}

// optionalTaskID parses the task a checkpoint or activity log names ("": none).
func optionalTaskID(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return hub.ParseTaskID("task_id", s)
}

func specFromProto(p *hubv1.TaskSpec) (hub.TaskSpec, error) {
	if p == nil {
		return hub.TaskSpec{}, hub.Errorf(hub.EINVALID, "task is missing: give at least its title")
	}
	deps, err := taskIDs("depends_on", p.GetDependsOn())
	if err != nil {
		return hub.TaskSpec{}, err
	}
	return hub.TaskSpec{Title: p.GetTitle(), Description: p.GetDescription(), Priority: hub.Priority(p.GetPriority()),
		Labels: p.GetLabels(), Role: p.GetRole(), DependsOn: deps, Paths: p.GetPaths()}, nil
}

// patchFromProto reads an edit: the fields update_mask names, with their
// values from t.
func patchFromProto(t *hubv1.Task, mask *fieldmaskpb.FieldMask) (hub.TaskPatch, error) {
	if t == nil {
		t = &hubv1.Task{}
	}
	deps, err := taskIDs("depends_on", t.GetDependsOn())
	if err != nil {
		return hub.TaskPatch{}, err
	}
	p := hub.TaskPatch{Fields: mask.GetPaths(), Assignee: t.GetAssignee(), Result: t.GetResult(),
		Spec: hub.TaskSpec{Title: t.GetTitle(), Description: t.GetDescription(), Priority: hub.Priority(t.GetPriority()),
			Labels: t.GetLabels(), Role: t.GetRole(), DependsOn: deps, Paths: t.GetPaths()}}
	for _, f := range p.Fields {
		if f == "state" {
			if p.State, err = hub.ParseTaskState(t.GetState()); err != nil {
				return hub.TaskPatch{}, err
			}
		}
	}
	return p, nil
}

func (s *Server) listTasks(ctx context.Context, project, state string, ready bool, label, after string, limit int32, since time.Time) (*hubv1.ListTasksResponse, error) {
	q := hub.TaskQuery{Project: project, Ready: ready, Label: label, Limit: int(limit), UpdatedSince: since}
	if state != "" {
		st, err := hub.ParseTaskState(state)
		if err != nil {
			return nil, err
		}
		q.State = st
	}
	if after != "" {
		id, err := hub.ParseTaskID("after_id", after)
		if err != nil {
			return nil, err
		}
		q.AfterID = id
	}
	out, next, err := s.svc.Tasks.List(ctx, q)
	if err != nil {
		return nil, err
	}
	return &hubv1.ListTasksResponse{Tasks: tasksToProto(out), NextAfterId: hub.FormatTaskID(next)}, nil
}

// CreateTask implements hubv1.AgentServiceServer.
func (a *AgentServer) CreateTask(ctx context.Context, req *hubv1.CreateTaskRequest) (*hubv1.CreateTaskResponse, error) {
	spec, err := specFromProto(req.GetTask())
	if err != nil {
		return nil, err
	}
	if err := adminField(ctx, "project", req.GetProject() != ""); err != nil {
		return nil, err
	}
	t, err := a.s.svc.Tasks.Create(ctx, Caller(ctx), req.GetProject(), spec)
	if err != nil {
		return nil, err
	}
	return &hubv1.CreateTaskResponse{Task: taskToProto(t)}, nil
}

// ListTasks implements hubv1.AgentServiceServer.
func (a *AgentServer) ListTasks(ctx context.Context, req *hubv1.ListTasksRequest) (*hubv1.ListTasksResponse, error) {
	project, err := callerProject(ctx, req.GetProject())
	if err != nil {
		return nil, err
	}
	var since time.Time
	if s := req.GetUpdatedSince(); s != "" {
		if since, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return nil, hub.Errorf(hub.EINVALID, "updated_since %q is not a time: expected RFC 3339, such as 2026-01-02T15:04:05.123Z", s)
		}
	}
	return a.s.listTasks(ctx, project, req.GetState(), req.GetReady(), req.GetLabel(), req.GetAfterId(), req.GetLimit(), since)
}

// GetTask implements hubv1.AgentServiceServer: a task of the agent's
// project, or any task for the admin.
func (a *AgentServer) GetTask(ctx context.Context, req *hubv1.GetTaskRequest) (*hubv1.GetTaskResponse, error) {
	id, err := hub.ParseTaskID("id", req.GetId())
	if err != nil {
		return nil, err
	}
	project := "" // the admin: every project
	if c := Caller(ctx); c != nil {
		project = hub.ProjectOr(c.Project)
	}
	t, err := a.s.svc.Tasks.Get(ctx, project, id)
	if err != nil {
		return nil, err
	}
	return &hubv1.GetTaskResponse{Task: taskToProto(t)}, nil
}

// UpdateTask implements hubv1.AgentServiceServer.
func (a *AgentServer) UpdateTask(ctx context.Context, req *hubv1.UpdateTaskRequest) (*hubv1.UpdateTaskResponse, error) {
	id, err := hub.ParseTaskID("id", req.GetId())
	if err != nil {
		return nil, err
	}
	p, err := patchFromProto(req.GetTask(), req.GetUpdateMask())
	if err != nil {
		return nil, err
	}
	t, _, err := a.s.svc.Tasks.Update(ctx, Caller(ctx), id, p)
	if err != nil {
		return nil, err
	}
	return &hubv1.UpdateTaskResponse{Task: taskToProto(t)}, nil
}

// ClaimTask implements hubv1.AgentServiceServer.
func (a *AgentServer) ClaimTask(ctx context.Context, req *hubv1.ClaimTaskRequest) (*hubv1.ClaimTaskResponse, error) {
	id, err := hub.ParseTaskID("id", req.GetId())
	if err != nil {
		return nil, err
	}
	t, cs, err := a.s.svc.Tasks.Claim(ctx, Caller(ctx), id)
	if err != nil {
		return nil, err
	}
	return &hubv1.ClaimTaskResponse{Task: taskToProto(t), Conflicts: conflictsToProto(cs)}, nil
}

// NextTask implements hubv1.AgentServiceServer.
func (a *AgentServer) NextTask(ctx context.Context, req *hubv1.NextTaskRequest) (*hubv1.NextTaskResponse, error) {
	if n := req.GetWaitSeconds(); n < 0 || n > 60 {
		return nil, hub.Errorf(hub.EINVALID, "wait_seconds %d is out of range: expected 0 (answer at once) to 60", n)
	}
	r, err := a.s.svc.Tasks.Next(ctx, Caller(ctx), hub.NextRequest{Labels: req.GetLabels(), Role: req.GetRole(), Wait: time.Duration(req.GetWaitSeconds()) * time.Second})
	if err != nil {
		return nil, err
	}
	return &hubv1.NextTaskResponse{Task: taskToProto(r.Task), Conflicts: conflictsToProto(r.Conflicts), TimedOut: r.TimedOut}, nil
}

// CompleteTask implements hubv1.AgentServiceServer.
func (a *AgentServer) CompleteTask(ctx context.Context, req *hubv1.CompleteTaskRequest) (*hubv1.CompleteTaskResponse, error) {
	id, err := hub.ParseTaskID("id", req.GetId())
	if err != nil {
		return nil, err
	}
	t, ready, err := a.s.svc.Tasks.Complete(ctx, Caller(ctx), id, req.GetNote())
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(ready))
	for i, r := range ready {
		ids[i] = r.ID
	}
	return &hubv1.CompleteTaskResponse{Task: taskToProto(t), Ready: taskIDsToProto(ids)}, nil
}

// BlockTask implements hubv1.AgentServiceServer.
func (a *AgentServer) BlockTask(ctx context.Context, req *hubv1.BlockTaskRequest) (*hubv1.BlockTaskResponse, error) {
	id, err := hub.ParseTaskID("id", req.GetId())
	if err != nil {
		return nil, err
	}
	t, err := a.s.svc.Tasks.Block(ctx, Caller(ctx), id, req.GetReason())
	if err != nil {
		return nil, err
	}
	return &hubv1.BlockTaskResponse{Task: taskToProto(t)}, nil
}

// ImportTasks implements hubv1.AdminServiceServer.
func (a *AdminServer) ImportTasks(ctx context.Context, req *hubv1.ImportTasksRequest) (*hubv1.ImportTasksResponse, error) {
	items := make([]hub.ImportItem, len(req.GetTasks()))
	for i, it := range req.GetTasks() {
		spec, err := specFromProto(it.GetTask())
		if err != nil {
			return nil, err
		}
		items[i] = hub.ImportItem{Key: it.GetKey(), Spec: spec, After: it.GetAfter()}
	}
	out, err := a.s.svc.Tasks.Import(ctx, nil, req.GetProject(), items)
	if err != nil {
		return nil, err
	}
	return &hubv1.ImportTasksResponse{Tasks: tasksToProto(out)}, nil
}

// SetTaskLease implements hubv1.AdminServiceServer.
func (a *AdminServer) SetTaskLease(ctx context.Context, req *hubv1.SetTaskLeaseRequest) (*hubv1.SetTaskLeaseResponse, error) {
	n := req.GetLeaseSeconds()
	if n < 0 {
		return nil, hub.Errorf(hub.EINVALID, "lease_seconds %d is negative: give a lease in seconds, or 0 for the hub's --task-lease", n)
	}
	d, err := a.s.svc.Tasks.SetLease(ctx, req.GetProject(), time.Duration(n)*time.Second)
	if err != nil {
		return nil, err
	}
	return &hubv1.SetTaskLeaseResponse{Project: req.GetProject(), LeaseSeconds: int64(d / time.Second)}, nil
}
