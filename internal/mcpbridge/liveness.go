package mcpbridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// activityTypes are the activity log types the hub accepts, with the seeds'
// Japanese aliases.
var activityTypes = []string{"thinking", "observation", "creation", "reflection", "other", "思考", "観測", "創造", "内省"}

// CreateActivityLogInput is the input of create_activity_log.
type CreateActivityLogInput struct {
	Type         string   `json:"type" jsonschema:"thinking, observation, creation, reflection or other (思考 観測 創造 内省 also work)"`
	Title        string   `json:"title" jsonschema:"one line: what you did"`
	Content      string   `json:"content,omitempty" jsonschema:"details, results, what is next; each line is kept"`
	Tags         []string `json:"tags,omitempty"`
	UrgentReason string   `json:"urgent_reason,omitempty" jsonschema:"only in an emergency: why this log is not the reflection that is due (the duty moves to your next log)"`
}

// CreateActivityLogOutput is what create_activity_log returns.
type CreateActivityLogOutput struct {
	ID                string    `json:"id"`
	Type              string    `json:"type"`
	HeartbeatID       string    `json:"heartbeat_id"`
	Elapsed           *Elapsed  `json:"elapsed,omitempty" jsonschema:"time since this heartbeat began"`
	Notes             []string  `json:"notes,omitempty"`
	CompletedDeepWork *DeepWork `json:"completed_deep_work,omitempty"`
	ReflectionDue     bool      `json:"reflection_due,omitempty" jsonschema:"your next log must be of type reflection"`
}

func createActivityLogTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[CreateActivityLogInput, CreateActivityLogOutput]) {
	t := &mcp.Tool{
		Name:  "create_activity_log",
		Title: "Log a finished activity",
		Description: "Record an activity you just finished (type + title + content), filed under your current heartbeat automatically. " +
			"Log each small step as you complete it; write a 'reflection' regularly and always right after deep work ends.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in CreateActivityLogInput) (*mcp.CallToolResult, CreateActivityLogOutput, error) {
		typ := strings.ToLower(strings.TrimSpace(in.Type))
		if !slices.Contains(activityTypes, typ) {
			return nil, CreateActivityLogOutput{}, badInput("type %q is not one of %s", in.Type, strings.Join(activityTypes, ", "))
		}
		title := strings.TrimSpace(in.Title)
		if title == "" {
			return nil, CreateActivityLogOutput{}, badInput("title is empty: say in one line what you did")
		}
		var content []string
		if c := strings.TrimRight(in.Content, "\n"); c != "" {
			content = strings.Split(c, "\n")
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, CreateActivityLogOutput{}, err
		}
		r, err := b.client.CreateActivityLog(ctx, &hubv1.CreateActivityLogRequest{
			Type:         typ,
			Title:        title,
			Content:      content,
			Tags:         cleanNames(in.Tags),
			UrgentReason: strings.TrimSpace(in.UrgentReason),
		})
		if err != nil {
			return nil, CreateActivityLogOutput{}, b.hubError(err)
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
		fmt.Fprintf(&sb, "Logged %s %q under heartbeat %s", out.Type, title, out.HeartbeatID)
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
		return text(sb.String()), out, nil
	}
	return t, h
}

// CheckpointInput is the input of checkpoint.
type CheckpointInput struct {
	CurrentActivity string `json:"current_activity" jsonschema:"one line: what you are working on right now"`
}

// CheckpointOutput is what checkpoint returns.
type CheckpointOutput struct {
	ID                   string   `json:"id"`
	HeartbeatID          string   `json:"heartbeat_id"`
	Confirmation         string   `json:"confirmation,omitempty"`
	SinceLastActivityLog *Elapsed `json:"since_last_activity_log,omitempty"`
	Suggestion           string   `json:"suggestion,omitempty"`
}

func checkpointTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[CheckpointInput, CheckpointOutput]) {
	t := &mcp.Tool{
		Name:  "checkpoint",
		Title: "Checkpoint: still working",
		Description: "Say in one line that you are consciously still working on something. " +
			"Call it every few minutes during long work between activity logs, so the hub does not judge you inactive.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in CheckpointInput) (*mcp.CallToolResult, CheckpointOutput, error) {
		act := strings.TrimSpace(in.CurrentActivity)
		if act == "" {
			return nil, CheckpointOutput{}, badInput("current_activity is empty: say in one line what you are working on")
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, CheckpointOutput{}, err
		}
		r, err := b.client.Checkpoint(ctx, &hubv1.CheckpointRequest{CurrentActivity: act})
		if err != nil {
			return nil, CheckpointOutput{}, b.hubError(err)
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
			msg = fmt.Sprintf("Checkpoint recorded under heartbeat %s.", out.HeartbeatID)
		}
		if e := out.SinceLastActivityLog; e != nil && e.Formatted != "" {
			msg += fmt.Sprintf(" %s since your last activity log.", e.Formatted)
		}
		if out.Suggestion != "" {
			msg += " " + out.Suggestion
		}
		return text(msg), out, nil
	}
	return t, h
}

// StartDeepWorkInput is the input of start_deep_work.
type StartDeepWorkInput struct {
	Mode            string `json:"mode" jsonschema:"flexible (until your next activity log; keep checkpointing) or strict (a fixed time, all inactivity checks paused)"`
	PlannedActivity string `json:"planned_activity" jsonschema:"what you will focus on"`
	PlannedMinutes  int    `json:"planned_minutes,omitempty" jsonschema:"strict only: how long, in minutes"`
	Until           string `json:"until,omitempty" jsonschema:"strict only, instead of planned_minutes: end time in RFC 3339, e.g. 2026-01-02T15:04:05+09:00"`
}

// StartDeepWorkOutput is what start_deep_work returns.
type StartDeepWorkOutput struct {
	DeepWork DeepWork  `json:"deep_work"`
	Replaced *DeepWork `json:"replaced,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
}

func startDeepWorkTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[StartDeepWorkInput, StartDeepWorkOutput]) {
	t := &mcp.Tool{
		Name:  "start_deep_work",
		Title: "Declare deep work",
		Description: "Declare a long focused task so the hub relaxes its warnings. flexible: lasts until your next activity log, " +
			"checkpoints still expected. strict: for planned_minutes (or until), no inactivity checks. " +
			"The activity log that ends it is its result; the log after that must be a reflection.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in StartDeepWorkInput) (*mcp.CallToolResult, StartDeepWorkOutput, error) {
		mode := strings.ToLower(strings.TrimSpace(in.Mode))
		if mode != "flexible" && mode != "strict" {
			return nil, StartDeepWorkOutput{}, badInput("mode %q must be flexible or strict", in.Mode)
		}
		plan := strings.TrimSpace(in.PlannedActivity)
		if plan == "" {
			return nil, StartDeepWorkOutput{}, badInput("planned_activity is empty: say what you will focus on")
		}
		if in.PlannedMinutes < 0 {
			return nil, StartDeepWorkOutput{}, badInput("planned_minutes must be positive; got %d", in.PlannedMinutes)
		}
		var until *timestamppb.Timestamp
		if u := strings.TrimSpace(in.Until); u != "" {
			tm, err := time.Parse(time.RFC3339, u)
			if err != nil {
				return nil, StartDeepWorkOutput{}, badInput("until %q is not an RFC 3339 time such as 2026-01-02T15:04:05+09:00", u)
			}
			until = timestamppb.New(tm)
		}
		if mode == "strict" && in.PlannedMinutes == 0 && until == nil {
			return nil, StartDeepWorkOutput{}, badInput("strict deep work needs planned_minutes (e.g. 30) or until")
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, StartDeepWorkOutput{}, err
		}
		r, err := b.client.StartDeepWork(ctx, &hubv1.StartDeepWorkRequest{
			Mode:            mode,
			PlannedActivity: plan,
			PlannedMinutes:  int32(in.PlannedMinutes),
			Until:           until,
		})
		if err != nil {
			return nil, StartDeepWorkOutput{}, b.hubError(err)
		}
		out := StartDeepWorkOutput{Replaced: fromDeepWork(r.GetReplaced()), Notes: r.GetNotes()}
		if d := fromDeepWork(r.GetDeepWork()); d != nil {
			out.DeepWork = *d
		}
		// The hub's notes already say what was declared and replaced; the
		// bridge's own summary is only the fallback.
		msg := strings.Join(out.Notes, "\n")
		if msg == "" {
			msg = fmt.Sprintf("Deep work (%s) declared: %s", out.DeepWork.Mode, out.DeepWork.PlannedActivity)
			if out.DeepWork.EndsAt != "" {
				msg += " until " + out.DeepWork.EndsAt
			}
			msg += "."
			if out.Replaced != nil {
				msg += fmt.Sprintf(" It replaces %q.", out.Replaced.PlannedActivity)
			}
		}
		return text(msg), out, nil
	}
	return t, h
}

// ElapsedInput is the input of get_heartbeat_elapsed_time.
type ElapsedInput struct {
	HeartbeatID string `json:"heartbeat_id,omitempty" jsonschema:"YYYYMMDDHHMMSS; omit for your current heartbeat"`
}

// ElapsedOutput is what get_heartbeat_elapsed_time returns.
type ElapsedOutput struct {
	HeartbeatID string `json:"heartbeat_id"`
	Elapsed
}

func getHeartbeatElapsedTimeTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[ElapsedInput, ElapsedOutput]) {
	t := &mcp.Tool{
		Name:  "get_heartbeat_elapsed_time",
		Title: "Time since the heartbeat began",
		Description: "How long the current (or a given) heartbeat has been running, with a warning when the step is getting too long. " +
			"Use it to decide when to log, checkpoint or split the work into smaller steps.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in ElapsedInput) (*mcp.CallToolResult, ElapsedOutput, error) {
		id := strings.TrimSpace(in.HeartbeatID)
		if id != "" && (len(id) != 14 || !validCursor(id)) {
			return nil, ElapsedOutput{}, badInput("heartbeat_id %q must be 14 digits YYYYMMDDHHMMSS (e.g. 20260102150405), or omitted for the current one", id)
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, ElapsedOutput{}, err
		}
		r, err := b.client.GetHeartbeatElapsedTime(ctx, &hubv1.GetHeartbeatElapsedTimeRequest{HeartbeatId: id})
		if err != nil {
			return nil, ElapsedOutput{}, b.hubError(err)
		}
		out := ElapsedOutput{HeartbeatID: r.GetHeartbeatId()}
		if e := fromElapsed(r.GetElapsed()); e != nil {
			out.Elapsed = *e
		}
		msg := fmt.Sprintf("Heartbeat %s began %s ago.", out.HeartbeatID, out.Formatted)
		if out.WarningMessage != "" {
			msg += " " + out.WarningMessage
		}
		return text(msg), out, nil
	}
	return t, h
}

// RespondToPulseInput is the input of respond_to_pulse.
type RespondToPulseInput struct {
	Text string `json:"text" jsonschema:"HEARTBEAT_OK when there is nothing to report, else your short report"`
}

// RespondToPulseOutput is what respond_to_pulse returns.
type RespondToPulseOutput struct {
	Outcome   string `json:"outcome" jsonschema:"suppressed_ok, suppressed_duplicate or posted"`
	MessageID string `json:"message_id,omitempty"`
	Channel   string `json:"channel,omitempty"`
}

func respondToPulseTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[RespondToPulseInput, RespondToPulseOutput]) {
	t := &mcp.Tool{
		Name:  "respond_to_pulse",
		Title: "Answer a heartbeat pulse",
		Description: "Answer a heartbeat pulse (a message of kind heartbeat) after following its instructions: " +
			"HEARTBEAT_OK when there is nothing to report, otherwise a short report, which is posted to your output channel.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in RespondToPulseInput) (*mcp.CallToolResult, RespondToPulseOutput, error) {
		txt := strings.TrimSpace(in.Text)
		if txt == "" {
			return nil, RespondToPulseOutput{}, badInput("text is empty: send HEARTBEAT_OK if there is nothing to report")
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, RespondToPulseOutput{}, err
		}
		r, err := b.client.RespondToPulse(ctx, &hubv1.RespondToPulseRequest{Text: txt})
		if err != nil {
			return nil, RespondToPulseOutput{}, b.hubError(err)
		}
		out := RespondToPulseOutput{
			Outcome:   r.GetOutcome(),
			MessageID: r.GetMessage().GetId(),
			Channel:   r.GetMessage().GetChannel(),
		}
		var msg string
		switch out.Outcome {
		case "suppressed_ok":
			msg = "Pulse answered: nothing to report."
		case "suppressed_duplicate":
			msg = "Pulse answered; the report equals your last one, so it was not posted again."
		default:
			msg = fmt.Sprintf("Pulse answered (%s).", out.Outcome)
			if out.MessageID != "" {
				msg = fmt.Sprintf("Pulse report posted as message %s", out.MessageID)
				if out.Channel != "" {
					msg += " in " + out.Channel
				}
				msg += "."
			}
		}
		return text(msg), out, nil
	}
	return t, h
}
