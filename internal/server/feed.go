package server

import (
	"context"
	"strings"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
)

// FeedInterceptor announces hub.TopicAgents on feed after every call that
// succeeded and may have changed something (any method but Get*, List* and
// WaitForMessages), so that live pages re-read at once rather than at the
// next orchestrator tick, and marks the agent whose overview row the call
// may have changed: the calling agent, or the agent an admin call names
// (the dashboard's stream sends those rows).
func FeedInterceptor(feed *hub.Feed) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if err == nil && changes(info.FullMethod) {
			feed.Publish(hub.TopicAgents)
			markOverview(ctx, feed, info.FullMethod, req)
		}
		return resp, err
	}
}

// sameOverview lists the write calls that leave the caller's overview row
// as it was: a heartbeat or a hook's call moves only its last call, which
// the presence scan follows, and a post changes its recipients' rows
// (Waiters.Notify marks them), not the sender's.
var sameOverview = map[string]bool{
	hubv1.AgentService_Heartbeat_FullMethodName:     true,
	hubv1.AgentService_TakeInjection_FullMethodName: true,
	hubv1.AgentService_CheckStop_FullMethodName:     true,
	hubv1.AgentService_PostMessage_FullMethodName:   true,
}

// markOverview marks on feed the row a successful write call may have
// changed.
func markOverview(ctx context.Context, feed *hub.Feed, method string, req any) {
	if a := Caller(ctx); a != nil {
		if !sameOverview[method] {
			feed.AgentsChanged(a.ID)
		}
		return
	}
	switch r := req.(type) {
	case *hubv1.CreateAgentRequest, *hubv1.UpdateAgentRequest, *hubv1.DisableAgentRequest, *hubv1.EnableAgentRequest,
		*hubv1.RotateTokenRequest, *hubv1.RevokeTokenRequest, *hubv1.DeleteAgentRequest, *hubv1.EndDeepWorkRequest:
		feed.AgentNamed(r.(interface{ GetName() string }).GetName())
	case *hubv1.PruneMessagesRequest:
		feed.AllAgentsChanged() // unread counts of many agents
	}
}

// changes reports whether a method may write.
func changes(fullMethod string) bool {
	name := fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
	for _, read := range []string{"Get", "List", "Wait"} {
		if strings.HasPrefix(name, read) {
			return false
		}
	}
	return true
}
