package server

import (
	"context"
	"strings"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
)

// FeedInterceptor announces hub.TopicAgents on feed after every call that
// succeeded and changed something (any method but Get*, List* and
// WaitForMessages, during which a write committed: hub.WithCommits), so
// that live pages re-read at once rather than at the next orchestrator
// tick, and marks the agent whose overview row the call may have changed:
// the calling agent, or the agent an admin call names (the dashboard's
// stream sends those rows). Most calls of a busy fleet write nothing (a
// hook's injection or host event with nothing new) or nothing a page
// reads on a notice (unnoticed): they wake no stream and have no row read.
func FeedInterceptor(feed *hub.Feed) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if !changes(info.FullMethod) || unnoticed[info.FullMethod] {
			return handler(ctx, req)
		}
		ctx, commits := hub.WithCommits(ctx)
		resp, err := handler(ctx, req)
		if err == nil && commits.Any() {
			feed.Publish(hub.TopicAgents)
			markOverview(ctx, feed, info.FullMethod, req)
		}
		return resp, err
	}
}

// unnoticed lists the write calls whose writes no page reads on a change
// notice: a heartbeat's new ID shows only in the agent's row (the stream
// sends it with the row's next change, a tick re-reads it), a stop's count
// of holds nowhere.
var unnoticed = map[string]bool{
	hubv1.AgentService_Heartbeat_FullMethodName: true,
	hubv1.AgentService_CheckStop_FullMethodName: true,
}

// sameOverview lists the write calls that leave the caller's overview row
// as it was: a hook's injection moves only its last call, which the
// presence scan follows, and a post changes its recipients' rows
// (Waiters.Notify marks them), not the sender's.
var sameOverview = map[string]bool{
	hubv1.AgentService_TakeInjection_FullMethodName: true,
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
