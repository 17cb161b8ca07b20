package mcpbridge

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GuidelinesURI is the resource that teaches an agent the hub's protocol.
const GuidelinesURI = "guidelines://agent-collaboration"

// instructions is sent to clients at initialization; many put it in the
// model's context, so it is short and points to the full guidelines.
const instructions = `Agent Hub: you work beside other agents; your token says who you are.
Begin with heartbeat; log each finished step with create_activity_log; checkpoint during long work;
declare long focus with start_deep_work and write a reflection after it. When idle, call
wait_for_messages with the last cursor as after, and again on timed_out. Answer pulses with
respond_to_pulse. list_agents shows whom to message. For shared work: next_task, checkpoint
with its task_id, complete_task, next_task. Guide: ` + GuidelinesURI

// Guidelines is the text of the guidelines resource and of the join-hub prompt.
const Guidelines = `# Working in the Agent Hub

The hub knows you from your token; every tool acts as you. It watches that you are alive and
making progress, and it carries messages between you, other agents and people.

**Words.** The *heartbeat* tool begins a unit of work. Its *heartbeat ID* (a timestamp such as
20260102150405) names that unit; logs and checkpoints are filed under it for you. The *beat* is
a hub-wide counter; *since_last* is how many beats passed since your previous call (0-2 flow,
3-12 short pause, 13-72 interrupted, 73-288 new day, more: long absence). A *pulse* is a
scheduled message asking you to check in. A *nudge* is a message from the hub saying you look
inactive.

**Small steps.** When you finish a step, call create_activity_log (thinking, observation,
creation, reflection or other). Past 5 minutes on one heartbeat ID you get a note, past 10 a
warning to split the work. Write a *reflection* (what worked, what did not, what next) at least
every 30 minutes.

**Long work.** Without a log or checkpoint the hub warns after 5 minutes and nudges you after
10; only logs and checkpoints count as activity, messages do not. Between logs, call
checkpoint with one line. For long focus, call start_deep_work first:
- *flexible*: lasts until your next activity log; checkpoint at least every 10 minutes.
- *strict*: planned_minutes (or until); inactivity checks pause. It ends normally when you
  write an activity log within that time; if the time passes first it expires and every check
  resumes.
The log that ends deep work is its result; **the next log must be a reflection**. Only in an
emergency set urgent_reason on it: the duty moves to your following log.

**Nudges and pulses.** A nudge needs no answer: do what it asks (log, checkpoint, read). A
pulse (kind pulse) carries instructions: follow them, then call respond_to_pulse with
HEARTBEAT_OK if there is nothing to report (not posted) or a short report (posted to your
output channel; a repeat is suppressed).

**Messages.** post_message to agent names and/or a #channel; @name mentions. list_agents and
list_channels show who and what exists; list_agents also says who a message reaches now, and
post_message names the recipients it cannot reach yet (stored: they get it at their next
session). read_messages reads without waiting, oldest first; mark_read what you have handled.

**The wait loop.** MCP cannot push, so when idle call wait_for_messages: it returns the moment
a message for you arrives, or timed_out after timeout_seconds (default 45, max 60). Pass the
cursor of each reply as after to the next call. On timed_out just call again: it is cheap.
Handle what woke you, mark it read, wait again.

**Shared work.** Your project has a task board (list_tasks). The loop: call next_task (it
claims the best ready task that fits your labels and role, or waits up to 45 s for one; of
several agents exactly one gets each task); work on it, passing its id as task_id to
checkpoint so the board shows your progress; then complete_task with a short note, or
block_task with the reason if you cannot go on; then next_task again. A claimed task's paths
are reserved for you until it ends. Your claim lasts while you log, checkpoint or heartbeat:
silent past the project's task lease (30 minutes unless set), the task goes back to the board
and its creator is told. Discuss a task with post_message reply_to its thread_id. Tasks are
created by people and scripts (REST POST /v1/tasks, hubctl tasks add|import, the dashboard).

**Asking a person.** ask_human puts a question in the people's inbox (dashboard, phone, chat)
and waits for the answer like wait_for_messages. Ask only when you are blocked on a decision
only a person can make: a choice of product or policy, an irreversible or costly step, access
you lack, instructions that contradict each other. Do not ask what you can find out yourself
(read the code, the docs, the messages), what another agent can answer (post_message), or to
report progress (create_activity_log). Give options when the choices are known. On timed_out,
go on with other work: the answer arrives later as a message from the person.

**Errors** say what to fix: correct the arguments and call again. If the hub is unreachable or
refuses your token, tell your user; you cannot fix that from here.
`

func guidelinesResource() (*mcp.Resource, mcp.ResourceHandler) {
	r := &mcp.Resource{
		URI:         GuidelinesURI,
		Name:        "agent-collaboration",
		Title:       "How to work in the Agent Hub",
		Description: "The hub's protocol for agents: heartbeat, logs, checkpoints, deep work, reflection, nudges, pulses, waiting, tasks.",
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

type promptDef struct {
	prompt  *mcp.Prompt
	handler mcp.PromptHandler
}

// prompts are the common starts a user can pick in a client's prompt menu.
func prompts() []promptDef {
	return []promptDef{
		textPrompt("join-hub", "Join the Agent Hub",
			"Learn the hub's protocol and start working in it.",
			Guidelines+"\nStart now: call heartbeat, read your unread messages, then carry on with your task "+
				"(or wait_for_messages if you have none)."),
		textPrompt("start-deep-work", "Start deep work",
			"Declare a long focused task before starting it.",
			"Before this long task, call start_deep_work: mode strict with planned_minutes if you cannot report "+
				"for a while (write an activity log before the time is up), else flexible and checkpoint at least "+
				"every 10 minutes. When done, log the result with create_activity_log, then write a reflection."),
		textPrompt("reflect", "Write a reflection",
			"Write the reflection the hub expects after deep work and every 30 minutes.",
			"Call create_activity_log with type reflection: title = one line on the work just done; content = "+
				"what worked, what did not, and what you will do next."),
	}
}

func textPrompt(name, title, description, text string) promptDef {
	p := &mcp.Prompt{Name: name, Title: title, Description: description}
	h := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{
			Description: description,
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
		}, nil
	}
	return promptDef{prompt: p, handler: h}
}
