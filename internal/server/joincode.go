package server

import (
	"context"
	"strconv"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// JoinHub implements hubv1.AgentServiceServer. The interceptor lets it in
// without an agent; the code is the call's bearer credential.
func (a *AgentServer) JoinHub(ctx context.Context, req *hubv1.JoinHubRequest) (*hubv1.JoinHubResponse, error) {
	ag, token, err := a.s.svc.Agents.Join(ctx, hub.JoinRequest{
		Code: BearerToken(ctx), Name: req.GetName(), DisplayName: req.GetDisplayName(), Description: req.GetDescription(),
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.JoinHubResponse{Agent: a.s.agentView(ctx, ag), Token: token}, nil
}

// CreateJoinCode implements hubv1.AdminServiceServer.
func (a *AdminServer) CreateJoinCode(ctx context.Context, req *hubv1.CreateJoinCodeRequest) (*hubv1.CreateJoinCodeResponse, error) {
	secs := req.GetExpiresInSeconds()
	if secs < 0 || secs > int64(hub.JoinCodeMaxExpiry/time.Second) {
		return nil, hub.Errorf(hub.EINVALID, "expires_in_seconds %d is out of range: give 60 to %d, or 0 for 24 hours", secs, int64(hub.JoinCodeMaxExpiry/time.Second))
	}
	c, code, err := a.s.svc.Agents.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{
		Role: req.GetRole(), Note: req.GetNote(), MaxUses: req.GetMaxUses(), ExpiresIn: time.Duration(secs) * time.Second,
		Project: req.GetProject(),
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.CreateJoinCodeResponse{JoinCode: a.s.joinCodeToProto(c), Code: code}, nil
}

// ListJoinCodes implements hubv1.AdminServiceServer.
func (a *AdminServer) ListJoinCodes(ctx context.Context, _ *hubv1.ListJoinCodesRequest) (*hubv1.ListJoinCodesResponse, error) {
	cs, err := a.s.svc.Agents.ListJoinCodes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.JoinCode, len(cs))
	for i, c := range cs {
		out[i] = a.s.joinCodeToProto(c)
	}
	return &hubv1.ListJoinCodesResponse{JoinCodes: out}, nil
}

// RevokeJoinCode implements hubv1.AdminServiceServer.
func (a *AdminServer) RevokeJoinCode(ctx context.Context, req *hubv1.RevokeJoinCodeRequest) (*hubv1.RevokeJoinCodeResponse, error) {
	id, err := strconv.ParseInt(req.GetId(), 10, 64)
	if err != nil || id <= 0 {
		return nil, hub.Errorf(hub.EINVALID, "join code ID %q is invalid: give the number `hubctl join-codes list` shows", req.GetId())
	}
	c, err := a.s.svc.Agents.RevokeJoinCode(ctx, id)
	if err != nil {
		return nil, err
	}
	return &hubv1.RevokeJoinCodeResponse{JoinCode: a.s.joinCodeToProto(c)}, nil
}

func (s *Server) joinCodeToProto(c *hub.JoinCode) *hubv1.JoinCode {
	return &hubv1.JoinCode{
		Id:        strconv.FormatInt(c.ID, 10),
		Role:      c.Role,
		Project:   hub.ProjectOr(c.Project),
		Note:      c.Note,
		MaxUses:   c.MaxUses,
		Uses:      c.Uses,
		CreatedAt: ts(c.CreatedAt),
		ExpiresAt: ts(c.ExpiresAt),
		RevokedAt: ts(c.RevokedAt),
		State:     string(c.State(s.svc.Core.Now())),
	}
}
