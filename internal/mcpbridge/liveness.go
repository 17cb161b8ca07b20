package mcpbridge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// activityTypes are the activity log types the hub accepts, with their
// Japanese aliases.
var activityTypes = []string{"thinking", "observation", "creation", "reflection", "other", "思考", "観測", "創造", "内省"}

// CreateActivityLogInput is the input of create_activity_log.
type CreateActivityLogInput struct {
	Type         string   `json:"type" jsonschema:"reflection = what worked, what did not, next"`
	Title        string   `json:"title" jsonschema:"one line: what you did"`
	Content      string   `json:"content,omitempty" jsonschema:"details and results"`
	Tags         []string `json:"tags,omitempty"`
	UrgentReason string   `json:"urgent_reason,omitempty" jsonschema:"emergency: why this is not the due reflection"`
}

// CreateActivityLogOutput is what create_activity_log returns.
type CreateActivityLogOutput struct {
	ID                string    `json:"id"`
	Type              string    `json:"type"`
	HeartbeatID       string    `json:"heartbeat_id"`
	Elapsed           *Elapsed  `json:"elapsed,omitempty"`
	Notes             []string  `json:"notes,omitempty"`
	CompletedDeepWork *DeepWork `json:"completed_deep_work,omitempty"`
	ReflectionDue     bool      `json:"reflection_due,omitempty"`
}

func createActivityLogTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "create_activity_log",
		Description: "Log a step you just finished. A reflection is due every 30 min and after deep work.",
	}
	shape := func(p map[string]*jsonschema.Schema) { enum(p["type"], activityTypes...) }
	addTool(s, b, t, shape, func(ctx context.Context, _ *mcp.CallToolRequest, in CreateActivityLogInput) (string, CreateActivityLogOutput, error) {
		var content []string
		if c := strings.TrimRight(in.Content, "\n"); c != "" {
			content = strings.Split(c, "\n")
		}
		r, err := b.client.CreateActivityLog(ctx, &hubv1.CreateActivityLogRequest{
			Type:         in.Type,
			Title:        in.Title,
			Content:      content,
			Tags:         in.Tags,
			UrgentReason: in.UrgentReason,
		})
		if err != nil {
			return "", CreateActivityLogOutput{}, err
		}
		out := CreateActivityLogOutput{
			ID:                r.GetLog().GetId(),
			Type:              r.GetLog().GetType(),
			HeartbeatID:       r.GetHeartbeatId(),
			Elapsed:           fromElapsed(r.GetElapsed()),
			Notes:             r.GetNotes(),
			CompletedDeepWork: fromDeepWork(r.GetCompletedDeepWork()),
			ReflectionDue:     r.GetReflectionDue(),
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "Logged %s under heartbeat ID %s", out.Type, out.HeartbeatID)
		if out.Elapsed != nil && out.Elapsed.Formatted != "" {
			fmt.Fprintf(&sb, " (%s since it began)", out.Elapsed.Formatted)
		}
		sb.WriteString(".")
		if out.Elapsed != nil && out.Elapsed.WarningMessage != "" {
			sb.WriteString(" " + out.Elapsed.WarningMessage)
		}
		for _, n := range out.Notes {
			sb.WriteString("\n" + n)
		}
		if out.ReflectionDue {
			sb.WriteString("\nYour next activity log must be a reflection.")
		}
		return sb.String(), out, nil
	})
}

// CheckpointInput is the input of checkpoint.
type CheckpointInput struct {
	CurrentActivity string `json:"current_activity"`
	TaskID          ID     `json:"task_id,omitempty"`
}

// CheckpointOutput is what checkpoint returns.
type CheckpointOutput struct {
	ID                   string   `json:"id"`
	HeartbeatID          string   `json:"heartbeat_id"`
	Confirmation         string   `json:"confirmation,omitempty"`
	SinceLastActivityLog *Elapsed `json:"since_last_activity_log,omitempty"`
	Suggestion           string   `json:"suggestion,omitempty"`
}

func checkpointTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "checkpoint",
		Description: "One line on what you are still doing, between logs, so the hub does not judge you inactive.",
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in CheckpointInput) (string, CheckpointOutput, error) {
		r, err := b.client.Checkpoint(ctx, &hubv1.CheckpointRequest{CurrentActivity: in.CurrentActivity, TaskId: string(in.TaskID)})
		if err != nil {
			return "", CheckpointOutput{}, err
		}
		out := CheckpointOutput{
			ID:                   r.GetCheckpoint().GetId(),
			HeartbeatID:          r.GetHeartbeatId(),
			Confirmation:         r.GetConfirmation(),
			SinceLastActivityLog: fromElapsed(r.GetSinceLastActivityLog()),
			Suggestion:           r.GetSuggestion(),
		}
		msg := out.Confirmation
		if msg == "" {
			msg = fmt.Sprintf("Checkpoint recorded under heartbeat ID %s.", out.HeartbeatID)
		}
		if e := out.SinceLastActivityLog; e != nil && e.Formatted != "" {
			msg += fmt.Sprintf(" %s since your last activity log.", e.Formatted)
		}
		if out.Suggestion != "" {
			msg += " " + out.Suggestion
		}
		return msg, out, nil
	})
}

// StartDeepWorkInput is the input of start_deep_work.
type StartDeepWorkInput struct {
	Mode            string `json:"mode" jsonschema:"flexible: until your next log, checkpoint every 10 min; strict: fixed time, no inactivity checks"`
	PlannedActivity string `json:"planned_activity" jsonschema:"what you will focus on"`
	PlannedMinutes  int    `json:"planned_minutes,omitempty" jsonschema:"strict: how long"`
	Until           string `json:"until,omitempty" jsonschema:"strict: RFC 3339 end, instead of minutes"`
}

// StartDeepWorkOutput is what start_deep_work returns.
type StartDeepWorkOutput struct {
	DeepWork DeepWork  `json:"deep_work"`
	Replaced *DeepWork `json:"replaced,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
}

func startDeepWorkTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "start_deep_work",
		Description: "Declare a long focused task: checks relax. The log ending it is its result; the next must be a reflection.",
	}
	shape := func(p map[string]*jsonschema.Schema) {
		enum(p["mode"], "flexible", "strict")
		p["planned_minutes"].Minimum = new(float64)
	}
	addTool(s, b, t, shape, func(ctx context.Context, _ *mcp.CallToolRequest, in StartDeepWorkInput) (string, StartDeepWorkOutput, error) {
		var until *timestamppb.Timestamp
		if u := strings.TrimSpace(in.Until); u != "" {
			tm, err := time.Parse(time.RFC3339, u)
			if err != nil {
				return "", StartDeepWorkOutput{}, badInput("until %q is not an RFC 3339 time such as 2026-01-02T15:04:05+09:00", u)
			}
			until = timestamppb.New(tm)
		}
		r, err := b.client.StartDeepWork(ctx, &hubv1.StartDeepWorkRequest{
			Mode:            in.Mode,
			PlannedActivity: in.PlannedActivity,
			PlannedMinutes:  int32(in.PlannedMinutes),
			Until:           until,
		})
		if err != nil {
			return "", StartDeepWorkOutput{}, err
		}
		out := StartDeepWorkOutput{Replaced: fromDeepWork(r.GetReplaced()), Notes: r.GetNotes()}
		if d := fromDeepWork(r.GetDeepWork()); d != nil {
			out.DeepWork = *d
		}
		// The hub's notes say what was declared and replaced; the bridge's
		// own line is only the fallback.
		msg := strings.Join(out.Notes, "\n")
		if msg == "" {
			msg = fmt.Sprintf("Deep work (%s) declared: %s.", out.DeepWork.Mode, out.DeepWork.PlannedActivity)
		}
		return msg, out, nil
	})
}

// ElapsedInput is the input of get_heartbeat_elapsed_time.
type ElapsedInput struct {
	HeartbeatID ID `json:"heartbeat_id,omitempty" jsonschema:"YYYYMMDDHHMMSS; default yours"`
}

// ElapsedOutput is what get_heartbeat_elapsed_time returns.
type ElapsedOutput struct {
	HeartbeatID string `json:"heartbeat_id"`
	Elapsed
}

func getHeartbeatElapsedTimeTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "get_heartbeat_elapsed_time",
		Description: "How long your (or a given) heartbeat ID has run; warns when the step grows too long.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in ElapsedInput) (string, ElapsedOutput, error) {
		r, err := b.client.GetHeartbeatElapsedTime(ctx, &hubv1.GetHeartbeatElapsedTimeRequest{HeartbeatId: string(in.HeartbeatID)})
		if err != nil {
			return "", ElapsedOutput{}, err
		}
		out := ElapsedOutput{HeartbeatID: r.GetHeartbeatId()}
		if e := fromElapsed(r.GetElapsed()); e != nil {
			out.Elapsed = *e
		}
		msg := fmt.Sprintf("Heartbeat ID %s began %s ago.", out.HeartbeatID, out.Formatted)
		if out.WarningMessage != "" {
			msg += " " + out.WarningMessage
		}
		return msg, out, nil
	})
}

// RespondToPulseInput is the input of respond_to_pulse.
type RespondToPulseInput struct {
	Text string `json:"text"`
}

// RespondToPulseOutput is what respond_to_pulse returns.
type RespondToPulseOutput struct {
	Outcome   string `json:"outcome"` // suppressed_ok, suppressed_duplicate or posted
	Pending   bool   `json:"pending"` // a pulse was waiting for this answer
	MessageID string `json:"message_id,omitempty"`
	Channel   string `json:"channel,omitempty"`
}

func respondToPulseTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "respond_to_pulse",
		Description: "Answer a pulse once followed: HEARTBEAT_OK, or a short report (posted).",
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in RespondToPulseInput) (string, RespondToPulseOutput, error) {
		r, err := b.client.RespondToPulse(ctx, &hubv1.RespondToPulseRequest{Text: in.Text})
		if err != nil {
			return "", RespondToPulseOutput{}, err
		}
		out := RespondToPulseOutput{
			Outcome:   r.GetOutcome(),
			Pending:   r.GetPending(),
			MessageID: r.GetMessage().GetId(),
			Channel:   r.GetMessage().GetChannel(),
		}
		return pulseText(out), out, nil
	})
}

// pulseText says what became of a pulse answer, and whether there was a
// pulse to answer at all.
func pulseText(o RespondToPulseOutput) string {
	var msg string
	switch {
	case o.Outcome == "suppressed_ok":
		msg = "Nothing to report: not posted."
	case o.Outcome == "suppressed_duplicate":
		msg = "Same report as last time: not posted again."
	case o.MessageID != "":
		msg = fmt.Sprintf("Report posted as message %s in %s.", o.MessageID, o.Channel)
	default:
		msg = fmt.Sprintf("Answer recorded (%s).", o.Outcome)
	}
	if !o.Pending {
		return "No pulse was waiting for an answer, so there was nothing to answer. " + msg
	}
	return "Pulse answered. " + msg
}
