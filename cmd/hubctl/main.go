// Command hubctl is the Agent Hub admin CLI: a gRPC client of the hub's
// AdminService (admin token) and, for a few commands, its AgentService
// (an agent token).
//
// # Adding a command
//
// Put the commands of one group in one file (agents.go, messages.go,
// liveness.go, schedule.go, …) and add a row to commandTable below:
//
//	{name: "cron add", group: "schedule", summary: "create a scheduled message",
//		usage: "NAME (--every 1m | --at TIME | --cron EXPR) --to AGENT|#channel --message TEXT",
//		run: cronAdd},
//
// Nested names are space-separated; `hubctl help` lists commands by group.
// The run function looks like this:
//
//	func cronAdd(ctx context.Context, c *cli, args []string) error {
//		fs := c.flags("cron add")           // -h prints the usage above and the flags
//		every := fs.Duration("every", 0, "period")
//		pos, err := c.parse(fs, args)       // flags may come before or after NAME
//		if err != nil {
//			return err
//		}
//		if len(pos) != 1 {
//			return usageErrorf("give one job NAME")   // exit code 2, usage printed
//		}
//		resp, err := c.admin.CreateCronJob(ctx, &hubv1.CreateCronJobRequest{…})
//		if err != nil {
//			return err                      // gRPC errors are explained for people
//		}
//		if c.json {
//			return c.printProto(resp)       // -o json: protojson, proto field names
//		}
//		c.table([]string{"NAME", "NEXT RUN"}, [][]string{{…}})
//		return nil
//	}
//
// c.admin and c.agent are ready-made clients (they connect on first use);
// the global flags (--addr, --token, --data-dir, -o, --tls, --tls-ca,
// --admin-token) are accepted anywhere on the command line and are removed
// before a command sees its arguments. Helpers for output (c.table,
// c.printProto, c.printJSON, fmtTime, fmtAgo, dash) are in output.go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/agenthub/hub/internal/termtext"
	hubversion "github.com/agenthub/hub/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Everything hubctl prints goes through the sanitizer: what agents
	// wrote (bodies, names, reasons, titles) cannot drive the terminal.
	stdout, stderr := termtext.NewWriter(os.Stdout), termtext.NewWriter(os.Stderr)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, stdout, stderr)
	stop()
	stdout.Flush()
	stderr.Flush()
	os.Exit(code)
}

// command is one hubctl command.
type command struct {
	// name is the command line that selects it: "info", "agent add".
	name string
	// group is the heading it is listed under in `hubctl help`.
	group string
	// summary is one line for the command list.
	summary string
	// usage is the synopsis of the arguments after the name
	// ("NAME [--role R]"); shown by -h and on usage errors.
	usage string
	// run does the work. args are what follows the name, global flags
	// removed. Return usageErrorf(...) for bad arguments (exit 2); any
	// other error is printed (exit 1).
	run func(ctx context.Context, c *cli, args []string) error
}

// indexCommands maps commands by name. It panics on a duplicate name or a
// missing run func, so that a mistake in the table fails every test.
func indexCommands(table []command) map[string]*command {
	byName := make(map[string]*command, len(table))
	for i := range table {
		cmd := &table[i]
		if cmd.name == "" || cmd.run == nil {
			panic("hubctl: a command needs a name and a run func")
		}
		if _, dup := byName[cmd.name]; dup {
			panic("hubctl: command listed twice: " + cmd.name)
		}
		if cmd.group == "" {
			cmd.group = "other"
		}
		byName[cmd.name] = cmd
	}
	return byName
}

// commandTable is every hubctl command, grouped as `hubctl help` lists
// them; each command's run function lives in the file named beside it.
func commandTable() []command {
	return []command{
		// agents.go
		{name: "agent add", group: "agents", summary: "register an agent and print its token (shown once) and setup lines",
			usage: "NAME [--project P] [--role R] [--display-name D] [--description T] [--locale en|ja]", run: agentAdd},
		{name: "agent list", group: "agents", summary: "list agents with project, presence, health and since_last",
			usage: "[--enabled] [--project P]", run: agentList},
		{name: "agent show", group: "agents", summary: "show one agent (and its health)", usage: "NAME", run: agentShow},
		{name: "agent update", group: "agents", summary: "change an agent's role, display name, description or locale",
			usage: "NAME [--role R] [--display-name D] [--description T] [--locale en|ja]", run: agentUpdate},
		{name: "agent disable", group: "agents", summary: "refuse an agent's token from now on", usage: "NAME", run: agentSetDisabled(true)},
		{name: "agent enable", group: "agents", summary: "accept a disabled agent's token again", usage: "NAME", run: agentSetDisabled(false)},
		{name: "agent token rotate", group: "agents", summary: "issue a new token for an agent (the old one stops working)", usage: "NAME", run: agentRotate},
		{name: "agent token revoke", group: "agents", summary: "revoke an agent's token without issuing a new one", usage: "NAME", run: agentRevoke},
		// agent_delete.go
		{name: "agent delete", group: "agents", summary: "delete a disabled agent and all its data (the messages it sent included) for good",
			usage: "NAME --yes", run: agentDelete},
		// joincodes.go
		{name: "join-codes create", group: "agents", summary: "create a join code agents register themselves with (shown once)",
			usage: "[--expires 24h] [--max-uses N] [--role R] [--note T] [--project P]", run: joinCodesCreate},
		{name: "join-codes list", group: "agents", summary: "list join codes with their state and uses", run: joinCodesList},
		{name: "join-codes revoke", group: "agents", summary: "revoke join codes: they register no agent from now on", usage: "ID...", run: joinCodesRevoke},
		// messages.go
		{name: "send", group: "messages", summary: `post a message as "admin" to agents and/or a channel`,
			usage: "--to NAME|#channel|project/#channel [--to …] [--project P] [--reply-to ID] [--mention NAME] [--priority P] [--ack] TEXT… (TEXT \"-\" reads stdin)", run: runSend},
		{name: "messages post", group: "messages", summary: "the same as send",
			usage: "--to NAME|#channel|project/#channel [--to …] [--project P] [--reply-to ID] [--mention NAME] [--priority low|normal|high|urgent] [--ack] TEXT…", run: runSend},
		{name: "messages", group: "messages", summary: "show the newest messages (all, one agent's or one channel's); --follow tails them",
			usage: "[--project P] [--agent NAME] [--channel #name] [--after ID] [--limit N] [--follow]", run: runMessages},
		// search.go
		{name: "messages search", group: "messages", summary: "find messages by their words, best match first (every word required; \"a phrase\")",
			usage: "[--project P] [--agent NAME] [--from NAME] [--channel #name] [--thread ID] [--since T] [--until T] [--min-priority P] [--limit N] [--page TOKEN] QUERY…", run: runSearch},
		// receipts.go
		{name: "messages show", group: "messages", summary: "show one message and, per recipient, when it was delivered, read and acknowledged",
			usage: "ID", run: runShowMessage},
		// prune.go
		{name: "messages prune", group: "messages", summary: "delete the messages created before a time (in small batches; IDs are not reused)",
			usage: "--before TIME|AGE   (RFC 3339 time such as 2026-01-31T00:00:00Z, or an age such as 30d)", run: runPrune},
		// projects.go
		{name: "projects", group: "projects", summary: "list projects with their agents and links", run: projectsList},
		{name: "projects list", group: "projects", summary: "same as projects", run: projectsList},
		{name: "projects create", group: "projects", summary: "create a project (then: agent add NAME --project P)", usage: "NAME", run: projectsCreate},
		{name: "projects link", group: "projects", summary: "let two projects' agents list and message each other's agents and channels (nothing else)",
			usage: "PROJECT OTHER", run: projectsLink(true)},
		{name: "projects unlink", group: "projects", summary: "remove the link between two projects", usage: "PROJECT OTHER", run: projectsLink(false)},
		// liveness.go
		{name: "health", group: "liveness", summary: "show agents' health (healthy, warning, anomaly) with findings and presence",
			usage: "[NAME...]", run: healthCmd},
		{name: "events", group: "liveness", summary: "list the event history: health transitions, deep work, reflection waivers and anomalies, nudges",
			usage: "[--agent NAME] [--kind KIND] [--since 1h|RFC3339] [--limit N] [--follow]", run: eventsCmd},
		{name: "deepwork", group: "liveness", summary: "list deep work declarations (active, completed, expired)",
			usage: "[--agent NAME] [--state active|completed|expired] [--limit N]", run: deepWorkCmd},
		// inbox.go
		{name: "inbox", group: "people", summary: "list what agents ask of people: approvals, questions, agents waiting (open first: urgent, then oldest), a page at a time",
			usage: "[--state open|answered|expired|withdrawn] [--project P] [--limit N] [--page-token T]", run: inboxList},
		{name: "inbox answer", group: "people", summary: "answer an inbox item: allow or deny an approval, answer a question, raise or lift a budget",
			usage: "ID allow|deny|raise|lift|TEXT… [--remember agent|project [--whole-tool]] [--usd-per-day N] [--tokens-per-day N] [--message M]", run: inboxAnswer},
		{name: "inbox rules", group: "people", summary: "list the remembered allows (calls allowed without asking, what each covers, until they expire)", usage: "[--all]", run: inboxRules},
		{name: "inbox rules revoke", group: "people", summary: "revoke remembered allows: their tools ask a person again", usage: "ID...", run: inboxRulesRevoke},
		{name: "webhooks add", group: "people", summary: "tell a chat tool or HTTP receiver of new inbox items (signed JSON with a \"text\" field)",
			usage: "URL [--kind approval|question|needs_input|budget]... [--project P]... [--secret S]", run: webhooksAdd},
		{name: "webhooks list", group: "people", summary: "list the webhooks", run: webhooksList},
		{name: "webhooks rm", group: "people", summary: "remove webhooks and their delivery logs", usage: "ID...", run: webhooksRemove},
		{name: "webhooks log", group: "people", summary: "show the webhooks' delivery log (status, attempts, the receiver's answer)", usage: "[ID] [--limit N]", run: webhooksLog},
		{name: "people add", group: "people", summary: "name a person and print their person token (shown once): answers the inbox, posts, administers nothing", usage: "NAME [--project P]...", run: peopleAdd},
		{name: "people list", group: "people", summary: "list the people (the operator holds the admin token)", run: peopleList},
		{name: "people revoke", group: "people", summary: "revoke people's tokens", usage: "NAME...", run: peopleRevoke},
		// reservations.go
		// tasks.go
		{name: "tasks", group: "tasks", summary: "list the task boards (every project's, or --project's)",
			usage: "[--project P] [--state S] [--ready] [--label L] [--limit N]", run: tasksList},
		{name: "tasks list", group: "tasks", summary: "same as tasks", usage: "[--project P] [--state S] [--ready] [--label L] [--limit N]", run: tasksList},
		{name: "tasks add", group: "tasks", summary: "add a task to a project's board",
			usage: "TITLE [--project P] [--description D] [--priority P] [--label L]... [--after ID]... [--path GLOB]... [--role R]", run: tasksAdd},
		{name: "tasks show", group: "tasks", summary: "show a task with its dependents and latest checkpoints", usage: "ID", run: tasksShow},
		{name: "tasks claim", group: "tasks", summary: "assign a task to an agent, or return it to open (--release)", usage: "ID (--agent NAME | --release)", run: tasksClaim},
		{name: "tasks done", group: "tasks", summary: "mark a task done (its dependents may become ready)", usage: "ID [--note TEXT]", run: tasksDone},
		{name: "tasks block", group: "tasks", summary: "mark a task blocked", usage: "ID [--reason TEXT]", run: tasksBlock},
		{name: "tasks cancel", group: "tasks", summary: "cancel a task", usage: "ID [--reason TEXT]", run: tasksCancel},
		{name: "tasks import", group: "tasks", summary: "add tasks from a Markdown checklist (indented items first) or JSON",
			usage: "FILE|- [--project P]", run: tasksImport},
		{name: "tasks lease", group: "tasks", summary: "set how long a project's claims last past their holder's last activity",
			usage: "PROJECT DURATION (0: the hub's --task-lease)", run: tasksLease},
		{name: "reservations", group: "reservations", summary: "list agents' active path reservations (overlapping PATHs, if given)",
			usage: "[--project P] [--agent NAME] [PATH...]", run: reservationsList},
		{name: "reservations list", group: "reservations", summary: "same as reservations", usage: "[--project P] [--agent NAME] [PATH...]", run: reservationsList},
		{name: "reservations release", group: "reservations", summary: "force-release reservations (an event records it on the holder)",
			usage: "ID... [--reason TEXT]", run: reservationsRelease},
		{name: "reservations reserve", group: "reservations", summary: "reserve paths for an agent; only the admin may reserve the whole project (**) exclusively",
			usage: "--agent NAME [--shared] [--ttl 30m] [--reason TEXT] PATH...", run: reservationsReserve},
		// schedule.go
		{name: "beat", group: "schedule", summary: "show the global beat (a counter advanced every --beat-interval) and each agent's since_last in beats", run: runBeat},
		{name: "nudge", group: "schedule", summary: "send an agent a nudge (a system message mentioning it; wakes its wait)",
			usage: "NAME [TEXT...]", run: runNudge},
		{name: "pulses", group: "schedule", summary: "list heartbeat pulses and why each does or does not fire now", run: runPulses},
		{name: "pulse set", group: "schedule", summary: "configure an agent's heartbeat pulse (flags not given keep their value)",
			usage: "NAME [--instructions TEXT | --instructions-file FILE|-] [--interval 30m] [--hours HH:MM-HH:MM] [--tz ZONE] [--channel #name] [--disable]",
			run:   runPulseSet},
		{name: "pulse trigger", group: "schedule", summary: "send an agent a heartbeat pulse now, whatever its schedule", usage: "NAME", run: runPulseTrigger},
		{name: "cron add", group: "schedule", summary: "create a scheduled message",
			usage: "NAME (--every 1m | --at TIME | --cron \"EXPR\") --to AGENT|#channel --message TEXT [--anchor TIME] [--project P]", run: runCronAdd},
		{name: "cron list", group: "schedule", summary: "list cron jobs with their next and last runs", usage: "[--project P]", run: runCronList},
		{name: "cron rm", group: "schedule", summary: "delete a cron job (cron runs NAME still lists its runs)", usage: "NAME", run: runCronRm},
		{name: "cron enable", group: "schedule", summary: "enable a cron job (resets its errors; schedules from now)", usage: "NAME", run: runCronSetEnabled(true)},
		{name: "cron disable", group: "schedule", summary: "disable a cron job", usage: "NAME", run: runCronSetEnabled(false)},
		{name: "cron run", group: "schedule", summary: "run a cron job now (its schedule is unchanged)", usage: "NAME", run: runCronRun},
		{name: "cron runs", group: "schedule", summary: "show the newest runs, of one job or of all", usage: "[NAME] [--limit N]", run: runCronRuns},
		// status.go
		{name: "usage", group: "hub", summary: "show what agents spent (tokens, requests, USD) as their hosts reported it, grouped",
			usage: "[--by agent|project|task|model|day,...] [--since 24h] [--until T] [--agent NAME]", run: usageCmd},
		// budgets.go
		{name: "budgets", group: "hub", summary: "list the daily budgets (per agent or per project) and where each stands today",
			usage: "[--agent NAME | --project P]", run: budgetsList},
		{name: "budgets list", group: "hub", summary: "same as budgets", usage: "[--agent NAME | --project P]", run: budgetsList},
		{name: "budgets set", group: "hub", summary: "set the daily budget of an agent or of a project (at 80 % the agent is warned; at the limit its work stops and the inbox asks)",
			usage: "--agent NAME | --project P [--usd-per-day 10] [--tokens-per-day N]", run: budgetsSet},
		{name: "budgets rm", group: "hub", summary: "delete the daily budget of an agent or of a project", usage: "--agent NAME | --project P", run: budgetsRm},
		{name: "info", group: "hub", summary: "show the hub's version, time, store and orchestrator figures", run: runInfo},
		{name: "status", group: "hub", summary: "show an agent's status (check_hub_status); needs --token or HUB_TOKEN", run: runStatus},
		{name: "watch", group: "hub", summary: "live view of agents and the newest events, refreshed until q or Ctrl-C",
			usage: "[--interval 2s] [--events N] [--once]", run: runWatch},
		// completion.go
		{name: "completion", group: "hub", summary: "print a shell completion script: source <(hubctl completion bash)",
			usage: "bash|zsh|fish", run: runCompletion},
		// doctor.go
		{
			name:    "doctor",
			group:   "hub",
			summary: "check that the hub is reachable, the token works, the clocks agree and the hub is ready; say what to fix",
			usage:   "[--http URL] [--max-skew 2s]",
			run:     runDoctor,
		},
		// backup.go
		{
			name:    "backup",
			group:   "hub",
			summary: "write a consistent copy of the hub's database while it runs (restore: RELIABILITY.md)",
			usage:   "FILE",
			run:     runBackup,
		},
	}
}

// groupOrder is the order of known groups in `hubctl help`; other groups
// follow alphabetically.
var groupOrder = []string{"agents", "messages", "people", "liveness", "schedule", "reservations", "tasks", "hub"}

// usageError is a mistake on the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usageErrorf returns a usage error (exit code 2; the command's usage is
// printed after the message).
func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr *termtext.Writer) int {
	c := newCLI(getenv, stdin, stdout, stderr)
	defer c.close()
	rest, err := c.parseGlobal(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help(nil)
			return 0
		}
		fmt.Fprintf(stderr, "hubctl: %v\n", err)
		fmt.Fprintln(stderr, `Run "hubctl help" for the commands and global flags.`)
		return 2
	}
	if len(rest) == 0 {
		c.shortHelp()
		return 0
	}
	if rest[0] == "help" {
		c.help(rest[1:])
		return 0
	}
	if rest[0] == "version" || rest[0] == "--version" || rest[0] == "-version" {
		fmt.Fprint(stdout, hubversion.Long("hubctl"))
		return 0
	}
	cmd, cmdArgs := c.lookup(rest)
	if cmd == nil {
		if sub := c.subcommands(strings.Join(rest, " ")); len(sub) > 0 {
			fmt.Fprintf(stderr, "hubctl %s: give a subcommand:\n", strings.Join(rest, " "))
			c.listCommands(stderr, sub)
			return 2
		}
		fmt.Fprintf(stderr, "hubctl: unknown command %q\n", strings.Join(firstWords(rest), " "))
		fmt.Fprintln(stderr, `Run "hubctl help" for the commands.`)
		return 2
	}
	c.cmd = cmd
	err = cmd.run(ctx, c, cmdArgs)
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0 // -h: the flag set printed the usage
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "hubctl %s: %s\n", cmd.name, ue.msg)
		fmt.Fprintf(stderr, "usage: %s\n", synopsis(cmd))
		return 2
	case c.flagErr:
		return 2 // the flag set printed the error and the usage
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return 130
	}
	fmt.Fprintf(stderr, "hubctl %s: %s\n", cmd.name, c.explain(err))
	return 1
}

// lookup finds the longest registered name that prefixes args.
func (c *cli) lookup(args []string) (*command, []string) {
	for n := min(len(args), 4); n > 0; n-- {
		if strings.HasPrefix(args[n-1], "-") {
			continue
		}
		if cmd, ok := c.commands[strings.Join(args[:n], " ")]; ok {
			return cmd, args[n:]
		}
	}
	return nil, nil
}

// firstWords returns the leading non-flag words of args.
func firstWords(args []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			return args[:i]
		}
	}
	return args
}

// subcommands returns the commands whose name starts with prefix+" ".
func (c *cli) subcommands(prefix string) []*command {
	var out []*command
	for name, cmd := range c.commands {
		if strings.HasPrefix(name, prefix+" ") {
			out = append(out, cmd)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// synopsis is "hubctl NAME USAGE".
func synopsis(cmd *command) string {
	u := strings.TrimSpace(cmd.usage)
	u = strings.TrimPrefix(u, "hubctl ")
	if u == "" {
		return "hubctl " + cmd.name
	}
	if strings.HasPrefix(u, cmd.name) {
		return "hubctl " + u
	}
	return "hubctl " + cmd.name + " " + u
}

// shortHelp is what hubctl alone prints: the usage, the command words and
// where to start.
func (c *cli) shortHelp() {
	var words []string
	for _, w := range c.nextWords()[""] {
		if w != "help" && w != "version" {
			words = append(words, w)
		}
	}
	fmt.Fprintf(c.out, "hubctl administers an Agent Hub over gRPC.\n\nUsage: hubctl [global flags] COMMAND [args]\n\n"+
		"Commands: %s\n\n"+
		"Start with: hubctl doctor (is the hub there?), hubctl agent add NAME, hubctl watch.\n"+
		"Run \"hubctl help\" for every command and the global flags, \"hubctl help COMMAND\" for one.\n",
		strings.Join(words, ", "))
}

// help prints the command list, or one command's usage.
func (c *cli) help(args []string) {
	if len(args) > 0 {
		if cmd, _ := c.lookup(args); cmd != nil {
			fs := c.flags(cmd.name)
			fs.SetOutput(c.out)
			fs.Usage()
			return
		}
		if sub := c.subcommands(strings.Join(args, " ")); len(sub) > 0 {
			c.listCommands(c.out, sub)
			return
		}
		fmt.Fprintf(c.out, "unknown command %q\n\n", strings.Join(args, " "))
	}
	fmt.Fprint(c.out, "hubctl administers an Agent Hub over gRPC.\n\nUsage: hubctl [global flags] COMMAND [args]\n")
	byGroup := map[string][]*command{}
	for _, cmd := range c.commands {
		byGroup[cmd.group] = append(byGroup[cmd.group], cmd)
	}
	var groups []string
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool {
		ri, rj := groupRank(groups[i]), groupRank(groups[j])
		if ri != rj {
			return ri < rj
		}
		return groups[i] < groups[j]
	})
	for _, g := range groups {
		cmds := byGroup[g]
		sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
		fmt.Fprintf(c.out, "\n%s:\n", strings.ToUpper(g[:1])+g[1:])
		c.listCommands(c.out, cmds)
	}
	fmt.Fprint(c.out, "\nGlobal flags (anywhere on the line):\n")
	fs := flag.NewFlagSet("hubctl", flag.ContinueOnError)
	c.globalFlags(fs)
	fs.SetOutput(c.out)
	fs.PrintDefaults()
	fmt.Fprint(c.out, "\nRun \"hubctl help COMMAND\" or \"hubctl COMMAND -h\" for a command's flags.\n")
}

func groupRank(g string) int {
	if i := slices.Index(groupOrder, g); i >= 0 {
		return i
	}
	return len(groupOrder)
}

func (c *cli) listCommands(w io.Writer, cmds []*command) {
	width := 0
	for _, cmd := range cmds {
		width = max(width, len(cmd.name))
	}
	for _, cmd := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, cmd.name, cmd.summary)
	}
}
