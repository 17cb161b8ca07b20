package mcpbridge

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// waitGrace is how much longer than the wait itself the gRPC call may take
// before the bridge gives up on the hub; the hub answers at the end of the
// wait with an empty result, so the grace only matters when it is stuck.
const waitGrace = 15 * time.Second

// WaitInput is the input of wait_for_messages.
type WaitInput struct {
	TimeoutSeconds *int `json:"timeout_seconds,omitempty" jsonschema:"0 only looks"`
	After          ID   `json:"after,omitempty" jsonschema:"cursor of your last wait or read"`
	Limit          int  `json:"limit,omitempty"`
}

// WaitOutput is what wait_for_messages returns. An empty wake-up is a few
// fields only.
type WaitOutput struct {
	TimedOut     bool      `json:"timed_out"`
	Cursor       string    `json:"cursor"`
	Messages     []Message `json:"messages,omitempty"`
	UnreadCount  int64     `json:"unread_count"`
	MentionCount int64     `json:"mention_count,omitempty"`
	Beat         int64     `json:"beat"`
	SinceLast    int64     `json:"since_last"`
	Health       string    `json:"health,omitempty"`
	WaitedMS     int64     `json:"waited_ms"`
	// Note says what to do after an empty wake-up, as the text does (some
	// hosts show the model only the structured content).
	Note string `json:"note,omitempty"`
}

func waitForMessagesTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "wait_for_messages",
		Description: "Sleep until a message for you arrives (use it when idle, not polling). Pass the cursor back as after; on timed_out call again.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	shape := func(p map[string]*jsonschema.Schema) {
		bounds(p["timeout_seconds"], 0, int(MaxWait/time.Second), int(b.opts.DefaultWait/time.Second))
		bounds(p["limit"], 1, 100, 20)
	}
	addTool(s, b, t, shape, func(ctx context.Context, req *mcp.CallToolRequest, in WaitInput) (string, WaitOutput, error) {
		timeout := b.opts.DefaultWait
		if in.TimeoutSeconds != nil {
			timeout = min(time.Duration(*in.TimeoutSeconds)*time.Second, MaxWait)
		}
		if tok := req.Params.GetProgressToken(); tok != nil && timeout > 0 && req.Session != nil {
			stop := b.sendProgress(ctx, req.Session, tok, timeout)
			defer stop()
		}
		secs := int32(timeout / time.Second)
		rctx, cancel := context.WithTimeout(ctx, timeout+waitGrace)
		defer cancel()
		start := b.opts.Clock.Now()
		wreq := &hubv1.WaitForMessagesRequest{
			TimeoutSeconds: &secs,
			AfterId:        string(in.After),
			Limit:          int32(in.Limit),
		}
		r, err := carried(rctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_WaitForMessages{WaitForMessages: wreq}},
			(*hubv1.StreamReply).GetWaitForMessages,
			func() (*hubv1.WaitForMessagesResponse, error) {
				// What a stream that ended under the wait took of it is
				// not waited again.
				left := max(0, secs-int32(b.opts.Clock.Now().Sub(start)/time.Second))
				wreq.TimeoutSeconds = &left
				return b.client.WaitForMessages(rctx, wreq)
			})
		if err != nil {
			return "", WaitOutput{}, err
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
			out.WaitedMS = b.opts.Clock.Now().Sub(start).Milliseconds()
		}
		if out.Cursor == "" {
			switch {
			case len(out.Messages) > 0:
				out.Cursor = newestID(out.Messages)
			case in.After != "":
				out.Cursor = string(in.After)
			default:
				out.Cursor = st.GetLatestMessageId()
			}
		}
		text := waitText(out)
		if len(out.Messages) == 0 {
			out.Note = text
		}
		return text, out, nil
	})
}

// waitText is the short text of a wait result: on an empty wake-up one
// line that says what to do next (the figures are in the structured
// content); with messages, the messages themselves, since some clients show
// the model only the text.
func waitText(o WaitOutput) string {
	var sb strings.Builder
	if len(o.Messages) == 0 {
		sb.WriteString("Nothing new; call wait_for_messages again")
		if o.Cursor != "" {
			fmt.Fprintf(&sb, " with after=%s", o.Cursor)
		}
		sb.WriteString(".")
		if o.Health != "" {
			fmt.Fprintf(&sb, " Your health is %s: see check_hub_status.", o.Health)
		}
		return sb.String()
	}
	fmt.Fprintf(&sb, "%s:", plural(int64(len(o.Messages)), "new message", "new messages"))
	renderMessages(&sb, o.Messages)
	fmt.Fprintf(&sb, "\nNext wait: after=%s.", o.Cursor)
	for _, m := range o.Messages {
		if m.Kind == "pulse" {
			sb.WriteString(" A pulse is among them: follow it, then answer with respond_to_pulse.")
			break
		}
	}
	if o.Health != "" {
		fmt.Fprintf(&sb, " Your health is %s: see check_hub_status.", o.Health)
	}
	return sb.String()
}

// sendProgress sends a progress notification every ProgressInterval until
// the returned stop is called; stop waits for the sender to finish, so no
// notification follows the result.
func (b *bridge) sendProgress(ctx context.Context, ss *mcp.ServerSession, token any, timeout time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	start := b.opts.Clock.Now()
	tick := b.opts.Clock.NewTicker(b.opts.ProgressInterval)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C():
				waited := b.opts.Clock.Now().Sub(start)
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
