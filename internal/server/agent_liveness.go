package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// The agent-facing liveness handlers: activity
// logs, checkpoints, deep work and elapsed time.

// CreateActivityLog implements hubv1.AgentServiceServer.
func (a *AgentServer) CreateActivityLog(ctx context.Context, req *hubv1.CreateActivityLogRequest) (*hubv1.CreateActivityLogResponse, error) {
	caller := Caller(ctx)
	task, err := optionalTaskID(req.GetTaskId())
	if err != nil {
		return nil, err
	}
	r, err := a.s.svc.Liveness.CreateActivityLog(ctx, caller, hub.ActivityLog{
		Type:         hub.ActivityType(req.GetType()),
		Title:        req.GetTitle(),
		Content:      req.GetContent(),
		Tags:         req.GetTags(),
		UrgentReason: req.GetUrgentReason(),
		TaskID:       task,
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.CreateActivityLogResponse{
		Log:               activityLogToProto(r.Log, caller.Name),
		HeartbeatId:       r.HeartbeatID,
		Elapsed:           elapsedToProto(r.Elapsed),
		Notes:             r.Notes,
		CompletedDeepWork: deepWorkProto(r.Completed),
		ReflectionDue:     r.ReflectionDue,
	}, nil
}

// Checkpoint implements hubv1.AgentServiceServer.
func (a *AgentServer) Checkpoint(ctx context.Context, req *hubv1.CheckpointRequest) (*hubv1.CheckpointResponse, error) {
	caller := Caller(ctx)
	task, err := optionalTaskID(req.GetTaskId())
	if err != nil {
		return nil, err
	}
	r, err := a.s.svc.Liveness.Checkpoint(ctx, caller, req.GetCurrentActivity(), task)
	if err != nil {
		return nil, err
	}
	c := r.Checkpoint
	return &hubv1.CheckpointResponse{
		Checkpoint: &hubv1.Checkpoint{
			Id:              hub.FormatMessageID(c.ID),
			Agent:           caller.Name,
			CurrentActivity: c.CurrentActivity,
			HeartbeatId:     c.HeartbeatID,
			CreatedAt:       ts(c.CreatedAt),
		},
		HeartbeatId:          r.HeartbeatID,
		SinceLastActivityLog: elapsedToProto(r.SinceLastLog),
		Suggestion:           r.SinceLastLog.Warning,
		Confirmation:         r.Note,
	}, nil
}

// StartDeepWork implements hubv1.AgentServiceServer.
func (a *AgentServer) StartDeepWork(ctx context.Context, req *hubv1.StartDeepWorkRequest) (*hubv1.StartDeepWorkResponse, error) {
	r, err := a.s.svc.Liveness.StartDeepWork(ctx, Caller(ctx), hub.StartDeepWorkRequest{
		Mode:            req.GetMode(),
		PlannedActivity: req.GetPlannedActivity(),
		PlannedMinutes:  int64(req.GetPlannedMinutes()),
		Until:           fromTS(req.GetUntil()),
	})
	if err != nil {
		return nil, err
	}
	replaced := r.Replaced
	if replaced == nil {
		replaced = r.Expired
	}
	return &hubv1.StartDeepWorkResponse{DeepWork: deepWorkProto(r.DeepWork), Replaced: deepWorkProto(replaced), Notes: r.Notes}, nil
}

// GetDeepWork implements hubv1.AgentServiceServer.
func (a *AgentServer) GetDeepWork(ctx context.Context, req *hubv1.GetDeepWorkRequest) (*hubv1.GetDeepWorkResponse, error) {
	current, recent, err := a.s.svc.Liveness.DeepWork(ctx, Caller(ctx), int(req.GetLimit()))
	if err != nil {
		return nil, err
	}
	return &hubv1.GetDeepWorkResponse{Current: deepWorkProto(current), Recent: deepWorksProto(recent)}, nil
}

// GetHeartbeatElapsedTime implements hubv1.AgentServiceServer.
func (a *AgentServer) GetHeartbeatElapsedTime(ctx context.Context, req *hubv1.GetHeartbeatElapsedTimeRequest) (*hubv1.GetHeartbeatElapsedTimeResponse, error) {
	id, e, err := a.s.svc.Liveness.HeartbeatElapsed(ctx, Caller(ctx), req.GetHeartbeatId())
	if err != nil {
		return nil, err
	}
	return &hubv1.GetHeartbeatElapsedTimeResponse{HeartbeatId: id, Elapsed: elapsedToProto(e)}, nil
}

func elapsedToProto(e hub.Elapsed) *hubv1.Elapsed {
	return &hubv1.Elapsed{
		ElapsedSeconds:   e.Seconds,
		ElapsedFormatted: e.Formatted,
		WarningMessage:   e.Warning,
		Level:            string(e.Level),
	}
}

func activityLogToProto(l *hub.ActivityLog, agent string) *hubv1.ActivityLog {
	if l == nil {
		return nil
	}
	return &hubv1.ActivityLog{
		Id:           hub.FormatMessageID(l.ID),
		Agent:        agent,
		Type:         string(l.Type),
		Title:        l.Title,
		Content:      l.Content,
		Tags:         l.Tags,
		UrgentReason: l.UrgentReason,
		HeartbeatId:  l.HeartbeatID,
		CreatedAt:    ts(l.CreatedAt),
	}
}

// deepWorkProto is DeepWorkToProto with the agent's name.
func deepWorkProto(d *hub.DeepWork) *hubv1.DeepWork {
	p := DeepWorkToProto(d)
	if p != nil {
		p.Agent = d.AgentName
	}
	return p
}

func deepWorksProto(ds []*hub.DeepWork) []*hubv1.DeepWork {
	out := make([]*hubv1.DeepWork, len(ds))
	for i, d := range ds {
		out[i] = deepWorkProto(d)
	}
	return out
}
