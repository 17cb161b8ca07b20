package mcpbridge

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// waitGrace is how much longer than the wait itself the gRPC call may take
// before the bridge gives up on the hub; the hub answers at the end of the
// wait with an empty result, so the grace only matters when it is stuck.
const waitGrace = 15 * time.Second

const (
	defaultWaitLimit = 20
	maxWaitLimit     = 100
)

// WaitInput is the input of wait_for_messages.
type WaitInput struct {
	TimeoutSeconds *int   `json:"timeout_seconds,omitempty" jsonschema:"seconds to wait: default 45, max 60 (larger is clamped), 0 = just look"`
	After          string `json:"after,omitempty" jsonschema:"the cursor of your previous wait or read: wait only for messages after it; without it any unread message returns at once"`
	Limit          int    `json:"limit,omitempty" jsonschema:"at most this many messages (default 20, max 100)"`
}

// WaitOutput is what wait_for_messages returns. An empty wake-up is a few
// fields only.
type WaitOutput struct {
	TimedOut     bool      `json:"timed_out" jsonschema:"true when nothing arrived before the timeout"`
	Cursor       string    `json:"cursor" jsonschema:"pass as after to the next wait_for_messages"`
	Messages     []Message `json:"messages,omitempty"`
	UnreadCount  int64     `json:"unread_count"`
	MentionCount int64     `json:"mention_count,omitempty"`
	Beat         int64     `json:"beat"`
	SinceLast    int64     `json:"since_last"`
	Health       string    `json:"health,omitempty" jsonschema:"set only when not healthy: run check_hub_status for the findings"`
	WaitedMS     int64     `json:"waited_ms"`
}

func waitForMessagesTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[WaitInput, WaitOutput]) {
	t := &mcp.Tool{
		Name:  "wait_for_messages",
		Title: "Wait for messages",
		Description: "Sleep until a message for you arrives, then wake with it (returns the moment one is posted). " +
			"Use it whenever you are idle or waiting for another agent, instead of polling. " +
			"Default 45 s, max 60, 0 = just look. Pass the returned cursor as after on the next call; " +
			"on timed_out simply call again.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in WaitInput) (*mcp.CallToolResult, WaitOutput, error) {
		timeout := b.opts.DefaultWait
		if in.TimeoutSeconds != nil {
			s := *in.TimeoutSeconds
			if s < 0 {
				return nil, WaitOutput{}, badInput("timeout_seconds must be 0 (just look) to 60; got %d", s)
			}
			timeout = min(time.Duration(s)*time.Second, MaxWait)
		}
		after := strings.TrimSpace(in.After)
		if !validCursor(after) {
			return nil, WaitOutput{}, badInput("after %q is not a cursor: pass the cursor of a previous reply (digits)", after)
		}
		limit := in.Limit
		switch {
		case limit < 0:
			return nil, WaitOutput{}, badInput("limit must be between 1 and %d", maxWaitLimit)
		case limit == 0:
			limit = defaultWaitLimit
		case limit > maxWaitLimit:
			limit = maxWaitLimit
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, WaitOutput{}, err
		}

		if tok := req.Params.GetProgressToken(); tok != nil && timeout > 0 && req.Session != nil {
			stop := b.sendProgress(ctx, req.Session, tok, timeout)
			defer stop()
		}

		secs := int32(timeout / time.Second)
		rctx, cancel := context.WithTimeout(ctx, timeout+waitGrace)
		defer cancel()
		start := time.Now()
		r, err := b.client.WaitForMessages(rctx, &hubv1.WaitForMessagesRequest{
			TimeoutSeconds: &secs,
			AfterId:        after,
			Limit:          int32(limit),
		})
		if err != nil {
			return nil, WaitOutput{}, b.hubError(err)
		}
		st := r.GetStatus()
		out := WaitOutput{
			TimedOut:     r.GetTimedOut(),
			Cursor:       r.GetCursor(),
			Messages:     fromMessages(r.GetMessages()),
			UnreadCount:  st.GetUnreadCount(),
			MentionCount: st.GetMentionCount(),
			Beat:         st.GetBeat(),
			SinceLast:    st.GetSinceLast(),
			WaitedMS:     int64(r.GetWaitedMs()),
		}
		if h := st.GetHealth(); h != "" && h != "healthy" {
			out.Health = h
		}
		if out.WaitedMS == 0 {
			out.WaitedMS = time.Since(start).Milliseconds()
		}
		if out.Cursor == "" {
			switch n := len(out.Messages); {
			case n > 0:
				out.Cursor = out.Messages[n-1].ID
			case after != "":
				out.Cursor = after
			default:
				out.Cursor = st.GetLatestMessageId()
			}
		}
		return text(waitText(out)), out, nil
	}
	return t, h
}

// waitText is the short text of a wait result; on an empty wake-up it is one
// line, so a waiting agent spends few tokens per round.
func waitText(o WaitOutput) string {
	var sb strings.Builder
	if len(o.Messages) == 0 {
		fmt.Fprintf(&sb, "No new messages (waited %ds). unread %d, beat %d, since_last %d.",
			(o.WaitedMS+500)/1000, o.UnreadCount, o.Beat, o.SinceLast)
		if o.Health != "" {
			fmt.Fprintf(&sb, " Health %s: see check_hub_status.", o.Health)
		}
		if o.Cursor == "" {
			sb.WriteString(" To keep waiting call wait_for_messages again.")
		} else {
			fmt.Fprintf(&sb, " To keep waiting call wait_for_messages with after=%q.", o.Cursor)
		}
		return sb.String()
	}
	fmt.Fprintf(&sb, "%s:", plural(int64(len(o.Messages)), "new message", "new messages"))
	renderMessages(&sb, o.Messages)
	pulse := false
	for _, m := range o.Messages {
		if m.Kind == "heartbeat" {
			pulse = true
		}
	}
	fmt.Fprintf(&sb, "\ncursor %s (pass as after to the next wait). unread %d.", o.Cursor, o.UnreadCount)
	if pulse {
		sb.WriteString(" A heartbeat pulse is among them: follow it, then answer with respond_to_pulse (HEARTBEAT_OK if nothing to report).")
	}
	if o.Health != "" {
		fmt.Fprintf(&sb, " Health %s: see check_hub_status.", o.Health)
	}
	return sb.String()
}

// sendProgress sends a progress notification every ProgressInterval until
// the returned stop is called; stop waits for the sender to finish, so no
// notification follows the result.
func (b *bridge) sendProgress(ctx context.Context, ss *mcp.ServerSession, token any, timeout time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		tick := time.NewTicker(b.opts.ProgressInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				waited := time.Since(start)
				err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token,
					Progress:      waited.Seconds(),
					Total:         timeout.Seconds(),
					Message:       fmt.Sprintf("waiting for messages: %ds of %ds", int(waited.Seconds()), int(timeout.Seconds())),
				})
				if err != nil {
					b.opts.Logger.Debug("progress notification failed", "err", err)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
