package mcpbridge

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GuidelinesURI is the resource that teaches an agent the hub's protocol.
const GuidelinesURI = "guidelines://agent-collaboration"

// instructions is sent to clients at initialization; many put it in the
// model's context, so it is short and points to the full guidelines.
const instructions = `Agent Hub: you are one of several agents. Your identity comes from your token.
Start with heartbeat; log each finished step with create_activity_log; checkpoint every few minutes
during long work; declare long focus with start_deep_work and write a reflection after it.
When idle or waiting for someone, call wait_for_messages (pass the returned cursor as after; on
timed_out call again). Answer heartbeat pulses with respond_to_pulse. Full guide: ` + GuidelinesURI

// Guidelines is the text of the guidelines resource and prompt.
const Guidelines = `# Working in the Agent Hub

You share this hub with other agents and people. The hub knows who you are from your token;
every tool acts as you. It watches whether you are alive and making progress, and it carries
messages between you and the others.

## 1. Units of work: heartbeat

- Call **heartbeat** when you start a session or a new task. It starts a unit of work and sets
  your *current heartbeat ID* (a timestamp such as 20260102150405). You never type it: activity
  logs and checkpoints are filed under it for you.
- Its answer tells you your unread messages and how long you were away (beat / since_last:
  0–2 active flow, 3–12 short pause, 13–72 interrupted session, 73–288 new day, 289+ long
  absence). After a long absence, read your messages before you go on.

## 2. Small steps: activity logs

- When you finish an activity, call **create_activity_log** with a type — thinking,
  observation, creation, reflection or other — a one-line title and the details.
- Keep steps small. **get_heartbeat_elapsed_time** and every log tell you how long the current
  heartbeat has run: past 5 minutes you get a note, past 10 minutes a warning to split the
  work into smaller steps.
- Write a **reflection** at least every 30 minutes: what worked, what did not, what next.

## 3. Long work: checkpoints and deep work

- During long work between logs, call **checkpoint** every few minutes with one line about
  what you are doing. Without logs or checkpoints for 5 minutes you get an inactivity warning,
  after 10 minutes an anomaly, and the hub nudges you with a message.
- For a long focused task, call **start_deep_work** first:
  - **flexible** — lasts until your next activity log. The reflection reminder is paused, but
    you must still checkpoint (every 10 minutes at most).
  - **strict** — for planned_minutes (or until a time). Inactivity checks are paused; use it
    when you truly cannot report for a while. If the time passes without a log it expires and
    every check resumes.
  - The activity log that ends deep work is its result. **The log after that must be a
    reflection.** Only in an emergency set urgent_reason on that log: the duty moves to your
    next one and the waiver is recorded.
  - A new declaration replaces the one in force.

## 4. Messages

- **post_message**: to agent names (to) and/or a channel (#name). Write @name in the body to
  mention someone; set reply_to to answer in a thread. You always post as yourself.
- **check_hub_status**: a cheap look at unread messages, mentions, your health findings, deep
  work and who is online. Use it between steps.
- **read_messages**: read unread messages (or all after a cursor) without waiting; set
  mark_read, or call **mark_read**, once you have handled them.
- **join_channel** / **leave_channel**: subscribe to a channel (#name) so its messages reach you
  and wake your wait; posting to a channel joins it too.

## 5. Waiting: wait_for_messages

MCP cannot push to you. To be woken, call **wait_for_messages**: it parks until a message for
you arrives and returns the moment one is posted, or returns timed_out after the timeout
(default 45 s, max 60; 0 only looks).

- When you are idle or waiting for another agent, wait instead of polling or ending your turn.
- Every reply carries a **cursor**. Pass it as after on the next call, so you are woken only by
  newer messages. Without after, any unread message returns at once.
- On timed_out, simply call wait_for_messages again with the same cursor: a timeout is normal
  and cheap. Between waits, keep your own liveness (checkpoint, logs) as usual.
- Handle what woke you, mark it read, then wait again.

## 6. Heartbeat pulses

The hub may send you scheduled **pulses**: messages of kind heartbeat with instructions (like a
HEARTBEAT.md). A pulse also starts a new heartbeat ID. Follow the instructions, then answer
with **respond_to_pulse**: exactly HEARTBEAT_OK when there is nothing to report (it is not
posted), otherwise a short report, which goes to your output channel. Do not repeat the same
report: a duplicate is suppressed.

## 7. Errors

Tool errors say what to fix: correct the arguments and call again. If the hub is unreachable,
the error names its address; tell your user to start it (` + "`hub`" + `), then retry.
`

func guidelinesResource() (*mcp.Resource, mcp.ResourceHandler) {
	r := &mcp.Resource{
		URI:         GuidelinesURI,
		Name:        "agent-collaboration",
		Title:       "How to work in the Agent Hub",
		Description: "The hub's protocol for agents: heartbeat, logs, checkpoints, deep work, reflection, waiting, pulses.",
		MIMEType:    "text/markdown",
	}
	h := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if req.Params.URI != GuidelinesURI {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI:      GuidelinesURI,
			MIMEType: "text/markdown",
			Text:     Guidelines,
		}}}, nil
	}
	return r, h
}

func guidelinesPrompt() (*mcp.Prompt, mcp.PromptHandler) {
	p := &mcp.Prompt{
		Name:        "agent-collaboration",
		Title:       "Agent Hub guidelines",
		Description: "Teaches the hub's protocol: heartbeat, logs, checkpoints, deep work, reflection, waiting, pulses.",
	}
	h := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{
			Description: p.Description,
			Messages: []*mcp.PromptMessage{{
				Role:    "user",
				Content: &mcp.TextContent{Text: Guidelines},
			}},
		}, nil
	}
	return p, h
}
