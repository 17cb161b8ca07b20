package server

import (
	"context"
	"fmt"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/version"
)

// CreateAgent implements hubv1.AdminServiceServer.
func (a *AdminServer) CreateAgent(ctx context.Context, req *hubv1.CreateAgentRequest) (*hubv1.CreateAgentResponse, error) {
	ag, token, err := a.s.svc.Agents.CreateAgent(ctx, hub.CreateAgentRequest{
		Name: req.GetName(), DisplayName: req.GetDisplayName(), Role: req.GetRole(), Description: req.GetDescription(), Locale: req.GetLocale(),
		Project: req.GetProject(),
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.CreateAgentResponse{Agent: a.s.agentView(ctx, ag), Token: token}, nil
}

// ListAgents implements hubv1.AdminServiceServer.
func (a *AdminServer) ListAgents(ctx context.Context, req *hubv1.ListAgentsRequest) (*hubv1.ListAgentsResponse, error) {
	as, err := a.s.svc.Agents.ListAgents(ctx, req.GetIncludeDisabled())
	if err != nil {
		return nil, err
	}
	as = hub.InProject(as, req.GetProject(), hub.AgentProject)
	out := make([]*hubv1.Agent, len(as))
	for i, ag := range as {
		out[i] = a.s.agentView(ctx, ag)
	}
	return &hubv1.ListAgentsResponse{Agents: out}, nil
}

// GetAgent implements hubv1.AdminServiceServer.
func (a *AdminServer) GetAgent(ctx context.Context, req *hubv1.GetAgentRequest) (*hubv1.GetAgentResponse, error) {
	ag, err := a.s.svc.Agents.Agent(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return &hubv1.GetAgentResponse{Agent: a.s.agentView(ctx, ag)}, nil
}

// UpdateAgent implements hubv1.AdminServiceServer.
func (a *AdminServer) UpdateAgent(ctx context.Context, req *hubv1.UpdateAgentRequest) (*hubv1.UpdateAgentResponse, error) {
	ag, err := a.s.svc.Agents.UpdateAgent(ctx, hub.UpdateAgentRequest{
		Name: req.GetName(), DisplayName: req.DisplayName, Role: req.Role, Description: req.Description, Locale: req.Locale,
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.UpdateAgentResponse{Agent: a.s.agentView(ctx, ag)}, nil
}

// DisableAgent implements hubv1.AdminServiceServer.
func (a *AdminServer) DisableAgent(ctx context.Context, req *hubv1.DisableAgentRequest) (*hubv1.DisableAgentResponse, error) {
	ag, err := a.s.svc.Agents.SetAgentDisabled(ctx, req.GetName(), true)
	if err != nil {
		return nil, err
	}
	return &hubv1.DisableAgentResponse{Agent: a.s.agentView(ctx, ag)}, nil
}

// EnableAgent implements hubv1.AdminServiceServer.
func (a *AdminServer) EnableAgent(ctx context.Context, req *hubv1.EnableAgentRequest) (*hubv1.EnableAgentResponse, error) {
	ag, err := a.s.svc.Agents.SetAgentDisabled(ctx, req.GetName(), false)
	if err != nil {
		return nil, err
	}
	return &hubv1.EnableAgentResponse{Agent: a.s.agentView(ctx, ag)}, nil
}

// RotateToken implements hubv1.AdminServiceServer.
func (a *AdminServer) RotateToken(ctx context.Context, req *hubv1.RotateTokenRequest) (*hubv1.RotateTokenResponse, error) {
	ag, token, err := a.s.svc.Agents.RotateToken(ctx, req.GetName(), false)
	if err != nil {
		return nil, err
	}
	return &hubv1.RotateTokenResponse{Agent: a.s.agentView(ctx, ag), Token: token}, nil
}

// RevokeToken implements hubv1.AdminServiceServer.
func (a *AdminServer) RevokeToken(ctx context.Context, req *hubv1.RevokeTokenRequest) (*hubv1.RevokeTokenResponse, error) {
	ag, _, err := a.s.svc.Agents.RotateToken(ctx, req.GetName(), true)
	if err != nil {
		return nil, err
	}
	return &hubv1.RevokeTokenResponse{Agent: a.s.agentView(ctx, ag)}, nil
}

// GetHubInfo implements hubv1.AdminServiceServer. A person of some
// projects gets the counts of those projects' agents.
func (a *AdminServer) GetHubInfo(ctx context.Context, _ *hubv1.GetHubInfoRequest) (*hubv1.GetHubInfoResponse, error) {
	svc := a.s.svc
	agents, parked, err := svc.Agents.CountSeenBy(ctx, personOf(ctx))
	if err != nil {
		return nil, err
	}
	cfg := svc.Core.Config()
	r := &hubv1.GetHubInfoResponse{
		Version:       version.Version(),
		Time:          ts(svc.Core.Now()),
		TimeZone:      zoneName(cfg.Location, svc.Core.Now()),
		Beat:          svc.Core.Beat(),
		Agents:        agents,
		ParkedWaiters: parked,
		DataDir:       a.s.info.DataDir,
		StartedAt:     ts(svc.Core.StartedAt()),
		CaFingerprint: a.s.info.CAFingerprint,
	}
	if a.s.info.SchemaVersion != nil {
		r.SchemaVersion = int64(a.s.info.SchemaVersion())
	}
	if a.s.info.TickStats != nil {
		t := a.s.info.TickStats()
		r.Ticks, r.LastTickMicros, r.LastTickError = t.Ticks, t.LastMicro, t.LastError
		if t.LastAt != 0 {
			r.LastTickAt = ts(time.Unix(0, t.LastAt))
		}
	}
	return r, nil
}

// zoneName names loc for people: its IANA name, or for the process's local
// zone (whose name Go reports as "Local") the abbreviation and offset in
// force at now, such as "Local (JST, UTC+09:00)".
func zoneName(loc *time.Location, now time.Time) string {
	if loc != time.Local {
		return loc.String()
	}
	abbr, _ := now.In(loc).Zone()
	return fmt.Sprintf("Local (%s, UTC%s)", abbr, now.In(loc).Format("-07:00"))
}

// Backup implements hubv1.AdminServiceServer.
func (a *AdminServer) Backup(ctx context.Context, req *hubv1.BackupRequest) (*hubv1.BackupResponse, error) {
	n, err := a.s.svc.Ops.Backup(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &hubv1.BackupResponse{Path: req.GetPath(), Bytes: n}, nil
}

// agentView converts an agent and adds what agentNow adds and its health.
func (s *Server) agentView(ctx context.Context, a *hub.Agent) *hubv1.Agent {
	p := s.agentNow(a)
	h, err := s.svc.Liveness.AgentHealthOf(ctx, a)
	if err != nil {
		s.log.Warn("agent view: health", "agent", a.Name, "err", err)
		return p
	}
	p.Health = string(h.Health.State)
	return p
}

// agentNow converts an agent and adds what the hub knows of it now: its
// presence, beat, reachability and retirement.
func (s *Server) agentNow(a *hub.Agent) *hubv1.Agent {
	p := agentToProto(a)
	pr := s.svc.Liveness.PresenceOf(a)
	p.LastSeenAt, p.Presence = ts(pr.LastSeenAt), string(pr.State)
	p.LastInteractionBeat, p.SinceLast = pr.LastInteractionBeat, pr.SinceLast
	r := s.svc.Liveness.ReachOf(a)
	p.Reachable, p.Paths = r.Reachable, pathsToProto(r.Paths)
	if hub.Retired(a, pr.LastSeenAt) {
		p.RetiredAt = ts(a.RetiredAt)
	}
	return p
}
