package server

import (
	"context"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// Handlers of the orchestrator's admin API: beat, nudges, pulses, cron.

// GetBeat implements hubv1.AdminServiceServer.
func (a *AdminServer) GetBeat(ctx context.Context, _ *hubv1.GetBeatRequest) (*hubv1.GetBeatResponse, error) {
	b, err := a.s.svc.Schedule.BeatInfo(ctx)
	if err != nil {
		return nil, err
	}
	out := &hubv1.BeatInfo{
		Beat:            b.Beat,
		StartedAt:       ts(b.StartedAt),
		LastBeatAt:      ts(b.LastBeatAt),
		IntervalSeconds: int64(b.Interval / time.Second),
	}
	for _, ag := range b.Agents {
		out.Agents = append(out.Agents, &hubv1.BeatAgent{Agent: ag.Agent, LastInteractionBeat: ag.LastInteractionBeat, SinceLast: ag.SinceLast, Reading: ag.Reading})
	}
	return &hubv1.GetBeatResponse{Beat: out}, nil
}

// Nudge implements hubv1.AdminServiceServer.
func (a *AdminServer) Nudge(ctx context.Context, req *hubv1.NudgeRequest) (*hubv1.NudgeResponse, error) {
	if err := hub.ValidateAgentName(req.GetName()); err != nil {
		return nil, err
	}
	m, err := a.s.svc.Nudges.Nudge(ctx, req.GetName(), req.GetText())
	if err != nil {
		return nil, err
	}
	return &hubv1.NudgeResponse{Message: messageToProto(m)}, nil
}

func pulseStatusToProto(p hub.PulseStatus) *hubv1.PulseStatus {
	reason := p.Reason
	if reason == hub.PulseReady {
		reason = ""
	}
	return &hubv1.PulseStatus{
		Config: &hubv1.PulseConfig{
			Agent:           p.AgentName,
			Enabled:         p.Config.Enabled,
			IntervalSeconds: int64(p.Config.Interval / time.Second),
			ActiveHours:     p.Config.ActiveHours,
			TimeZone:        p.Config.TimeZone,
			Instructions:    p.Config.Instructions,
			OutputChannel:   p.Config.OutputChannel,
		},
		LastPulseAt:   ts(p.State.LastPulseAt),
		Unanswered:    p.State.Unanswered,
		LastOutput:    p.State.LastOutput,
		BlockedReason: reason,
		NextDueAt:     ts(p.NextDueAt),
	}
}

// SetPulseConfig implements hubv1.AdminServiceServer.
func (a *AdminServer) SetPulseConfig(ctx context.Context, req *hubv1.SetPulseConfigRequest) (*hubv1.SetPulseConfigResponse, error) {
	c := req.GetConfig()
	if c == nil {
		return nil, hub.Errorf(hub.EINVALID, "config is required: give at least agent and instructions")
	}
	if err := hub.ValidateAgentName(c.GetAgent()); err != nil {
		return nil, err
	}
	if c.GetIntervalSeconds() < 0 {
		return nil, hub.Errorf(hub.EINVALID, "interval_seconds %d is negative: give a period in seconds, or 0 for the default (%s)", c.GetIntervalSeconds(), hub.DefaultPulseInterval)
	}
	st, err := a.s.svc.Schedule.SetPulseConfig(ctx, c.GetAgent(), hub.PulseConfig{
		Enabled:       c.GetEnabled(),
		Interval:      time.Duration(c.GetIntervalSeconds()) * time.Second,
		ActiveHours:   c.GetActiveHours(),
		TimeZone:      c.GetTimeZone(),
		Instructions:  c.GetInstructions(),
		OutputChannel: c.GetOutputChannel(),
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.SetPulseConfigResponse{Pulse: pulseStatusToProto(*st)}, nil
}

// ListPulses implements hubv1.AdminServiceServer.
func (a *AdminServer) ListPulses(ctx context.Context, _ *hubv1.ListPulsesRequest) (*hubv1.ListPulsesResponse, error) {
	ps, err := a.s.svc.Schedule.ListPulses(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.PulseStatus, len(ps))
	for i, p := range ps {
		out[i] = pulseStatusToProto(p)
	}
	return &hubv1.ListPulsesResponse{Pulses: out}, nil
}

// TriggerPulse implements hubv1.AdminServiceServer.
func (a *AdminServer) TriggerPulse(ctx context.Context, req *hubv1.TriggerPulseRequest) (*hubv1.TriggerPulseResponse, error) {
	if err := hub.ValidateAgentName(req.GetName()); err != nil {
		return nil, err
	}
	m, hbID, err := a.s.svc.Schedule.TriggerPulse(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return &hubv1.TriggerPulseResponse{Message: messageToProto(m), HeartbeatId: hbID}, nil
}

func cronJobToProto(j *hub.CronJob) *hubv1.CronJob {
	out := &hubv1.CronJob{
		Name:              j.Name,
		Kind:              j.Kind,
		Expr:              j.Expr,
		Target:            j.Target,
		Message:           j.Message,
		Enabled:           j.Enabled,
		ConsecutiveErrors: int64(j.ConsecutiveErrors),
		NextRunAt:         ts(j.NextRunAt),
		LastRunAt:         ts(j.LastRunAt),
		CreatedAt:         ts(j.CreatedAt),
		Project:           hub.ProjectOr(j.Project),
	}
	switch j.Kind {
	case hub.CronAt:
		out.At = ts(j.At)
	case hub.CronEvery:
		out.EverySeconds, out.Anchor = j.EverySeconds, ts(j.Anchor)
	}
	return out
}

func cronRunToProto(r *hub.CronRun) *hubv1.CronRun {
	return &hubv1.CronRun{
		Id:             hub.FormatMessageID(r.ID),
		Job:            r.JobName,
		ScheduledAt:    ts(r.ScheduledAt),
		RanAt:          ts(r.RanAt),
		Status:         r.Status,
		Error:          r.Error,
		DurationMicros: r.Duration.Microseconds(),
	}
}

// CreateCronJob implements hubv1.AdminServiceServer.
func (a *AdminServer) CreateCronJob(ctx context.Context, req *hubv1.CreateCronJobRequest) (*hubv1.CreateCronJobResponse, error) {
	c := req.GetJob()
	if c == nil {
		return nil, hub.Errorf(hub.EINVALID, "job is required: give name, a schedule (at, every_seconds or expr), target and message")
	}
	if err := checkAnchor(c.GetName(), c.GetAnchor()); err != nil {
		return nil, err
	}
	j, notice, err := a.s.svc.Schedule.CreateCronJob(ctx, hub.CronJob{
		Name:         c.GetName(),
		Kind:         c.GetKind(),
		At:           fromTS(c.GetAt()),
		EverySeconds: c.GetEverySeconds(),
		Anchor:       fromTS(c.GetAnchor()),
		Expr:         c.GetExpr(),
		Target:       c.GetTarget(),
		Message:      c.GetMessage(),
		Project:      c.GetProject(),
		Enabled:      true,
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.CreateCronJobResponse{Job: cronJobToProto(j), Warning: notice}, nil
}

// ListCronJobs implements hubv1.AdminServiceServer.
func (a *AdminServer) ListCronJobs(ctx context.Context, req *hubv1.ListCronJobsRequest) (*hubv1.ListCronJobsResponse, error) {
	js, err := a.s.svc.Schedule.ListCronJobs(ctx)
	if err != nil {
		return nil, err
	}
	js = hub.InProject(js, req.GetProject(), hub.CronJobProject)
	out := make([]*hubv1.CronJob, len(js))
	for i, j := range js {
		out[i] = cronJobToProto(j)
	}
	return &hubv1.ListCronJobsResponse{Jobs: out}, nil
}

// DeleteCronJob implements hubv1.AdminServiceServer.
func (a *AdminServer) DeleteCronJob(ctx context.Context, req *hubv1.DeleteCronJobRequest) (*hubv1.DeleteCronJobResponse, error) {
	if err := a.s.svc.Schedule.DeleteCronJob(ctx, req.GetName()); err != nil {
		return nil, err
	}
	return &hubv1.DeleteCronJobResponse{}, nil
}

// SetCronJobEnabled implements hubv1.AdminServiceServer.
func (a *AdminServer) SetCronJobEnabled(ctx context.Context, req *hubv1.SetCronJobEnabledRequest) (*hubv1.SetCronJobEnabledResponse, error) {
	j, err := a.s.svc.Schedule.SetCronJobEnabled(ctx, req.GetName(), req.GetEnabled())
	if err != nil {
		return nil, err
	}
	return &hubv1.SetCronJobEnabledResponse{Job: cronJobToProto(j)}, nil
}

// RunCronJob implements hubv1.AdminServiceServer.
func (a *AdminServer) RunCronJob(ctx context.Context, req *hubv1.RunCronJobRequest) (*hubv1.RunCronJobResponse, error) {
	r, err := a.s.svc.Schedule.RunCronJob(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return &hubv1.RunCronJobResponse{Run: cronRunToProto(r)}, nil
}

// ListCronRuns implements hubv1.AdminServiceServer.
func (a *AdminServer) ListCronRuns(ctx context.Context, req *hubv1.ListCronRunsRequest) (*hubv1.ListCronRunsResponse, error) {
	rs, err := a.s.svc.Schedule.ListCronRuns(ctx, req.GetJob(), int(req.GetLimit()))
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.CronRun, len(rs))
	for i, r := range rs {
		out[i] = cronRunToProto(r)
	}
	return &hubv1.ListCronRunsResponse{Runs: out}, nil
}
