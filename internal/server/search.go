package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// SearchMessages implements hubv1.AgentServiceServer: the messages the
// agent sent or received, or, for the admin, every message (of the agent
// and the project it names).
func (a *AgentServer) SearchMessages(ctx context.Context, req *hubv1.SearchMessagesRequest) (*hubv1.SearchMessagesResponse, error) {
	if err := adminField(ctx, "agent", req.GetAgent() != ""); err != nil {
		return nil, err
	}
	if err := adminField(ctx, "project", req.GetProject() != ""); err != nil {
		return nil, err
	}
	var hits []hub.SearchHit
	var next string
	var err error
	if caller := Caller(ctx); caller != nil {
		hits, next, err = a.s.svc.Messages.Search(ctx, caller, searchRequest(req))
	} else {
		r := searchRequest(req)
		r.Agent, r.Project = req.GetAgent(), req.GetProject()
		hits, next, err = a.s.svc.Messages.AdminSearch(ctx, r)
	}
	if err != nil {
		return nil, err
	}
	return &hubv1.SearchMessagesResponse{Hits: hitsToProto(hits), NextPageToken: next}, nil
}

func searchRequest(req *hubv1.SearchMessagesRequest) hub.SearchRequest {
	return hub.SearchRequest{
		Query: req.GetQuery(), From: req.GetFrom(), Channel: req.GetChannel(), Thread: req.GetThread(),
		Since: fromTS(req.GetSince()), Until: fromTS(req.GetUntil()),
		Limit: int(req.GetLimit()), PageToken: req.GetPageToken(),
		MinPriority: hub.Priority(req.GetMinPriority()),
	}
}

func hitsToProto(hits []hub.SearchHit) []*hubv1.SearchHit {
	out := make([]*hubv1.SearchHit, len(hits))
	for i, h := range hits {
		out[i] = &hubv1.SearchHit{Message: messageToProto(h.Message), Snippet: h.Snippet, Score: h.Score}
	}
	return out
}
