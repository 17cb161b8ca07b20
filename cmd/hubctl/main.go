// Command hubctl is the Agent Hub admin CLI: a gRPC client of the hub's
// AdminService (admin token) and, for a few commands, its AgentService
// (an agent token).
//
// # Adding a command
//
// Put the commands of one group in one file (agents.go, messages.go,
// liveness.go, schedule.go, …) and register each from that file's init():
//
//	func init() {
//		register(command{
//			name:    "cron add", // nested names are space-separated
//			group:   "schedule", // `hubctl help` lists commands by group
//			summary: "create a scheduled message",
//			usage:   "NAME (--every 1s | --at TIME | --cron EXPR) --to AGENT|#channel --message TEXT",
//			run:     cronAdd,
//		})
//	}
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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
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

// commands holds every registered command by name.
var commands = map[string]*command{}

// register adds a command; call it from init(). It panics on a duplicate
// name so that a clash is found by any test or run.
func register(cmd command) {
	if cmd.name == "" || cmd.run == nil {
		panic("hubctl: register needs a name and a run func")
	}
	if _, dup := commands[cmd.name]; dup {
		panic("hubctl: command registered twice: " + cmd.name)
	}
	if cmd.group == "" {
		cmd.group = "other"
	}
	commands[cmd.name] = &cmd
}

// groupOrder is the order of known groups in `hubctl help`; other groups
// follow alphabetically.
var groupOrder = []string{"agents", "messages", "liveness", "schedule", "hub"}

// usageError is a mistake on the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usageErrorf returns a usage error (exit code 2; the command's usage is
// printed after the message).
func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
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
		c.help(nil)
		return 2
	}
	if rest[0] == "help" {
		c.help(rest[1:])
		return 0
	}
	if rest[0] == "version" || rest[0] == "--version" || rest[0] == "-version" {
		fmt.Fprintln(stdout, "hubctl", version)
		return 0
	}
	cmd, cmdArgs := lookup(rest)
	if cmd == nil {
		if sub := subcommands(strings.Join(rest, " ")); len(sub) > 0 {
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
func lookup(args []string) (*command, []string) {
	for n := min(len(args), 4); n > 0; n-- {
		if strings.HasPrefix(args[n-1], "-") {
			continue
		}
		if cmd, ok := commands[strings.Join(args[:n], " ")]; ok {
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
func subcommands(prefix string) []*command {
	var out []*command
	for name, cmd := range commands {
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

// help prints the command list, or one command's usage.
func (c *cli) help(args []string) {
	if len(args) > 0 {
		if cmd, _ := lookup(args); cmd != nil {
			fs := c.flags(cmd.name)
			fs.SetOutput(c.out)
			fs.Usage()
			return
		}
		if sub := subcommands(strings.Join(args, " ")); len(sub) > 0 {
			c.listCommands(c.out, sub)
			return
		}
		fmt.Fprintf(c.out, "unknown command %q\n\n", strings.Join(args, " "))
	}
	fmt.Fprint(c.out, "hubctl administers an Agent Hub over gRPC.\n\nUsage: hubctl [global flags] COMMAND [args]\n")
	byGroup := map[string][]*command{}
	for _, cmd := range commands {
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
