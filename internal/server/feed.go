package server

import (
	"context"
	"strings"

	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
)

// FeedInterceptor announces hub.TopicAgents on feed after every call that
// succeeded and may have changed something (any method but Get*, List* and
// WaitForMessages), so that live pages re-read agents at once rather than
// at the next orchestrator tick.
func FeedInterceptor(feed *hub.Feed) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if err == nil && changes(info.FullMethod) {
			feed.Publish(hub.TopicAgents)
		}
		return resp, err
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
