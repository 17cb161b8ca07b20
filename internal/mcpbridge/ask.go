package mcpbridge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// AskInput is the input of ask_human.
type AskInput struct {
	Question       string   `json:"question"`
	Options        []string `json:"options,omitempty"`
	Urgency        string   `json:"urgency,omitempty"`
	TimeoutSeconds *int     `json:"timeout_seconds,omitempty"`
}

// AskOutput is what ask_human returns.
type AskOutput struct {
	ID         string `json:"id"`
	TimedOut   bool   `json:"timed_out"`
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answered_by,omitempty"`
}

func askHumanTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "ask_human",
		Description: "Ask the people a question only they can decide, and wait for the answer. On timed_out it comes later as a message.",
	}
	shape := func(p map[string]*jsonschema.Schema) {
		bounds(p["timeout_seconds"], 0, int(MaxWait/time.Second), int(b.opts.DefaultWait/time.Second))
		enum(p["urgency"], "normal", "urgent")
	}
	addTool(s, b, t, shape, func(ctx context.Context, req *mcp.CallToolRequest, in AskInput) (string, AskOutput, error) {
		timeout := b.opts.DefaultWait
		if in.TimeoutSeconds != nil {
			timeout = min(time.Duration(max(0, *in.TimeoutSeconds))*time.Second, MaxWait)
		}
		if tok := req.Params.GetProgressToken(); tok != nil && timeout > 0 && req.Session != nil {
			stop := b.sendProgress(ctx, req.Session, tok, timeout)
			defer stop()
		}
		secs := int32(timeout / time.Second)
		rctx, cancel := context.WithTimeout(ctx, timeout+waitGrace)
		defer cancel()
		r, err := b.client.AskHuman(rctx, &hubv1.AskHumanRequest{Question: in.Question, Options: in.Options, Urgency: in.Urgency, TimeoutSeconds: &secs})
		if err != nil {
			return "", AskOutput{}, err
		}
		it := r.GetItem()
		out := AskOutput{ID: it.GetId(), TimedOut: r.GetTimedOut(), Answer: it.GetAnswer(), AnsweredBy: it.GetAnsweredBy()}
		if out.TimedOut {
			return fmt.Sprintf("No answer yet to question %s: go on with other work; the answer will arrive as a message.", out.ID), out, nil
		}
		return fmt.Sprintf("%s answered: %s", out.AnsweredBy, strings.TrimSpace(out.Answer)), out, nil
	})
}
