package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// CreateProject implements hubv1.AdminServiceServer.
func (a *AdminServer) CreateProject(ctx context.Context, req *hubv1.CreateProjectRequest) (*hubv1.CreateProjectResponse, error) {
	p, err := a.s.svc.Projects.CreateProject(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return &hubv1.CreateProjectResponse{Project: projectToProto(p)}, nil
}

// ListProjects implements hubv1.AdminServiceServer: a person lists the
// projects the person sees.
func (a *AdminServer) ListProjects(ctx context.Context, _ *hubv1.ListProjectsRequest) (*hubv1.ListProjectsResponse, error) {
	ps, err := a.s.svc.Projects.ListProjects(ctx)
	if err != nil {
		return nil, err
	}
	ps = hub.SeenBy(ps, personOf(ctx), func(p *hub.Project) string { return p.Name })
	out := make([]*hubv1.Project, len(ps))
	for i, p := range ps {
		out[i] = projectToProto(p)
	}
	return &hubv1.ListProjectsResponse{Projects: out}, nil
}

// LinkProjects implements hubv1.AdminServiceServer.
func (a *AdminServer) LinkProjects(ctx context.Context, req *hubv1.LinkProjectsRequest) (*hubv1.LinkProjectsResponse, error) {
	if err := a.s.svc.Projects.LinkProjects(ctx, req.GetProject(), req.GetOther()); err != nil {
		return nil, err
	}
	return &hubv1.LinkProjectsResponse{}, nil
}

// UnlinkProjects implements hubv1.AdminServiceServer.
func (a *AdminServer) UnlinkProjects(ctx context.Context, req *hubv1.UnlinkProjectsRequest) (*hubv1.UnlinkProjectsResponse, error) {
	if err := a.s.svc.Projects.UnlinkProjects(ctx, req.GetProject(), req.GetOther()); err != nil {
		return nil, err
	}
	return &hubv1.UnlinkProjectsResponse{}, nil
}

func projectToProto(p *hub.Project) *hubv1.Project {
	return &hubv1.Project{Name: p.Name, CreatedAt: ts(p.CreatedAt), Links: p.Links, AgentCount: p.Agents}
}
