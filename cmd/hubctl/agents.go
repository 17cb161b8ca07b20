package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// agentFields are the optional descriptive flags of add and update.
type agentFields struct {
	role, displayName, description, locale *string
}

func defineAgentFields(fs *flag.FlagSet) agentFields {
	return agentFields{
		role:        fs.String("role", "", "role, e.g. coder, reviewer"),
		displayName: fs.String("display-name", "", "name shown to people"),
		description: fs.String("description", "", "what the agent does"),
		locale:      fs.String("locale", "", "message language: en or ja (default: the hub's)"),
	}
}

// oneName parses args that must hold exactly one NAME.
func (c *cli) oneName(fs *flag.FlagSet, args []string, what string) (string, error) {
	pos, err := c.parse(fs, args)
	if err != nil {
		return "", err
	}
	switch len(pos) {
	case 0:
		return "", usageErrorf("give the %s's NAME", what)
	case 1:
		return pos[0], nil
	}
	return "", usageErrorf("give one %s NAME, got %d arguments %q", what, len(pos), pos)
}

func agentAdd(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("agent add")
	f := defineAgentFields(fs)
	project := fs.String("project", "", "the agent's project (default: default); create it first with `hubctl projects create`")
	name, err := c.oneName(fs, args, "agent")
	if err != nil {
		return err
	}
	r, err := c.admin.CreateAgent(ctx, &hubv1.CreateAgentRequest{
		Name: name, Role: *f.role, DisplayName: *f.displayName, Description: *f.description, Locale: *f.locale, Project: *project,
	})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	a := r.GetAgent()
	fmt.Fprintf(c.out, "Created agent %s", a.GetName())
	if p := a.GetProject(); p != "" && p != "default" {
		fmt.Fprintf(c.out, " in project %s", p)
	}
	if a.GetRole() != "" {
		fmt.Fprintf(c.out, " (role %s)", a.GetRole())
	}
	fmt.Fprintln(c.out, ".")
	c.printToken(a.GetName(), r.GetToken())
	return nil
}

// printToken prints a token once with the lines that set an agent up: the
// same Claude Code line and Gemini CLI settings as docs/hosts.md, filled in.
func (c *cli) printToken(name, token string) {
	fmt.Fprintf(c.out, "\nToken (shown once; the hub keeps only a hash):\n  %s\n", token)
	fmt.Fprintf(c.out, "\nSet up %s:\n", name)
	addrExport := ""
	if c.addr != defaultAddr {
		addrExport = "  export HUB_ADDR=" + c.addr + "\n"
	}
	fmt.Fprintf(c.out, "  # shell, REST (Authorization: Bearer $HUB_TOKEN), hubctl status\n%s  export HUB_TOKEN=%s\n", addrExport, token)
	fmt.Fprintf(c.out, "  # Claude Code (MCP over stdio)\n  claude mcp add hub --env HUB_TOKEN=%s --env HUB_ADDR=%s -- hub mcp\n", token, c.addr)
	fmt.Fprintf(c.out, "  # Gemini CLI: in ~/.gemini/settings.json\n"+
		"  {\"mcpServers\": {\"hub\": {\"command\": \"hub\", \"args\": [\"mcp\"], "+
		"\"env\": {\"HUB_TOKEN\": %q, \"HUB_ADDR\": %q}, \"timeout\": 90000}}}\n", token, c.addr)
}

func agentList(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("agent list")
	enabled := fs.Bool("enabled", false, "hide disabled agents")
	project := fs.String("project", "", "only this project's agents")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("agent list takes no arguments, got %q", pos)
	}
	r, err := c.admin.ListAgents(ctx, &hubv1.ListAgentsRequest{IncludeDisabled: !*enabled, Project: *project})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetAgents()) == 0 {
		fmt.Fprintln(c.out, "No agents yet: add one with `hubctl agent add NAME`.")
		return nil
	}
	c.table(agentHeaders, agentRows(r.GetAgents(), time.Now()))
	return nil
}

var agentHeaders = []string{"NAME", "PROJECT", "ROLE", "PRESENCE", "REACHABLE", "HEALTH", "SINCE_LAST", "LAST SEEN", "DISABLED"}

func agentRows(agents []*hubv1.Agent, now time.Time) [][]string {
	rows := make([][]string, 0, len(agents))
	for _, a := range agents {
		disabled := ""
		if a.GetDisabled() {
			disabled = "yes"
		}
		rows = append(rows, []string{
			a.GetName(), dash(a.GetProject()), dash(a.GetRole()), dash(a.GetPresence()), reachWord(a), dash(a.GetHealth()),
			strconv.FormatInt(a.GetSinceLast(), 10), fmtAgo(a.GetLastSeenAt(), now), dash(disabled),
		})
	}
	return rows
}

// reachWord says whether a message reaches agent a now, and by which
// paths: "yes (wait, hook)", "no", or "retired".
func reachWord(a *hubv1.Agent) string {
	if a.GetRetiredAt() != nil {
		return "retired"
	}
	if !a.GetReachable() {
		return "no"
	}
	return "yes (" + strings.Join(livePaths(a.GetPaths()), ", ") + ")"
}

// livePaths names the live paths of ps.
func livePaths(ps []*hubv1.DeliveryPath) []string {
	var out []string
	for _, p := range ps {
		if p.GetLive() {
			out = append(out, p.GetKind())
		}
	}
	return out
}

// retiredText says whether agent a is retired, and since when.
func retiredText(a *hubv1.Agent) string {
	if a.GetRetiredAt() == nil {
		return "no"
	}
	return "since " + fmtTime(a.GetRetiredAt()) + " (left out of its peers' lists until it calls again)"
}

// pathsText lists every path of ps with when it was last seen, live ones
// marked: "wait live (now), hook (3m ago)".
func pathsText(ps []*hubv1.DeliveryPath, now time.Time) string {
	if len(ps) == 0 {
		return "none seen"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.GetKind()
		if p.GetLive() {
			parts[i] += " live"
		}
		parts[i] += " (" + fmtAgo(p.GetLastSeenAt(), now) + ")"
	}
	return strings.Join(parts, ", ")
}

func agentShow(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("agent show")
	name, err := c.oneName(fs, args, "agent")
	if err != nil {
		return err
	}
	r, err := c.admin.GetAgent(ctx, &hubv1.GetAgentRequest{Name: name})
	if err != nil {
		return err
	}
	// Health comes from the liveness API; show the agent without it if the
	// hub does not have that yet.
	hr, herr := c.admin.GetAgentHealth(ctx, &hubv1.GetAgentHealthRequest{Name: name})
	if herr != nil && status.Code(herr) != codes.Unimplemented {
		return herr
	}
	if c.json {
		out := map[string]json.RawMessage{}
		if out["agent"], err = protoJSON(r.GetAgent()); err != nil {
			return err
		}
		out["health"] = json.RawMessage("null")
		if hr != nil {
			if out["health"], err = protoJSON(hr.GetHealth()); err != nil {
				return err
			}
		}
		return c.printJSON(out)
	}
	a := r.GetAgent()
	now := time.Now()
	disabled := "no"
	if a.GetDisabled() {
		disabled = "since " + fmtTime(a.GetDisabledAt())
	}
	c.fields(
		"name", a.GetName(),
		"project", a.GetProject(),
		"display name", a.GetDisplayName(),
		"role", a.GetRole(),
		"description", a.GetDescription(),
		"locale", a.GetLocale(),
		"created", fmtTime(a.GetCreatedAt()),
		"disabled", disabled,
		"presence", a.GetPresence(),
		"reachable", reachWord(a),
		"paths", pathsText(a.GetPaths(), now),
		"retired", retiredText(a),
		"health", a.GetHealth(),
		"last seen", fmtSeen(a.GetLastSeenAt(), now),
		"heartbeat id", a.GetCurrentHeartbeatId(),
		"since last", fmt.Sprintf("%d beats (last interaction at beat %d)", a.GetSinceLast(), a.GetLastInteractionBeat()),
	)
	if h := hr.GetHealth(); h != nil {
		dw := "-"
		if d := h.GetDeepWork(); d != nil && d.GetState() != "" {
			dw = d.GetMode() + ": " + d.GetPlannedActivity()
			if d.GetEndsAt() != nil {
				dw += " (until " + fmtTime(d.GetEndsAt()) + ")"
			}
		}
		c.fields(
			"last activity", fmtAgo(h.GetLastActivityAt(), now),
			"last activity log", fmtAgo(h.GetLastActivityLogAt(), now),
			"last checkpoint", fmtAgo(h.GetLastCheckpointAt(), now),
			"last reflection", fmtAgo(h.GetLastReflectionAt(), now),
			"deep work", dw,
			"reflection due", yesNo(h.GetReflectionDue()),
		)
		if len(h.GetFindings()) > 0 {
			fmt.Fprintln(c.out)
			var rows [][]string
			for _, f := range h.GetFindings() {
				rows = append(rows, []string{f.GetSeverity(), f.GetKind(), fmtAgo(f.GetSince(), now), f.GetText()})
			}
			c.table([]string{"SEVERITY", "FINDING", "SINCE", "TEXT"}, rows)
		}
	}
	return nil
}

func agentUpdate(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("agent update")
	f := defineAgentFields(fs)
	name, err := c.oneName(fs, args, "agent")
	if err != nil {
		return err
	}
	req := &hubv1.UpdateAgentRequest{Name: name}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if set["role"] {
		req.Role = f.role
	}
	if set["display-name"] {
		req.DisplayName = f.displayName
	}
	if set["description"] {
		req.Description = f.description
	}
	if set["locale"] {
		req.Locale = f.locale
	}
	if len(set) == 0 {
		return usageErrorf("nothing to change: give --role, --display-name, --description or --locale")
	}
	r, err := c.admin.UpdateAgent(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "Updated agent %s.\n", r.GetAgent().GetName())
	return nil
}

func agentSetDisabled(disable bool) func(ctx context.Context, c *cli, args []string) error {
	verb := "enable"
	if disable {
		verb = "disable"
	}
	return func(ctx context.Context, c *cli, args []string) error {
		fs := c.flags("agent " + verb)
		name, err := c.oneName(fs, args, "agent")
		if err != nil {
			return err
		}
		var a *hubv1.Agent
		if disable {
			r, err := c.admin.DisableAgent(ctx, &hubv1.DisableAgentRequest{Name: name})
			if err != nil {
				return err
			}
			if c.json {
				return c.printProto(r)
			}
			a = r.GetAgent()
			fmt.Fprintf(c.out, "Disabled agent %s: its token is refused until `hubctl agent enable %s`.\n", a.GetName(), a.GetName())
			return nil
		}
		r, err := c.admin.EnableAgent(ctx, &hubv1.EnableAgentRequest{Name: name})
		if err != nil {
			return err
		}
		if c.json {
			return c.printProto(r)
		}
		fmt.Fprintf(c.out, "Enabled agent %s.\n", r.GetAgent().GetName())
		return nil
	}
}

func agentRotate(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("agent token rotate")
	name, err := c.oneName(fs, args, "agent")
	if err != nil {
		return err
	}
	r, err := c.admin.RotateToken(ctx, &hubv1.RotateTokenRequest{Name: name})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "Issued a new token for %s; the old one no longer works.\n", r.GetAgent().GetName())
	c.printToken(r.GetAgent().GetName(), r.GetToken())
	return nil
}

func agentRevoke(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("agent token revoke")
	name, err := c.oneName(fs, args, "agent")
	if err != nil {
		return err
	}
	r, err := c.admin.RevokeToken(ctx, &hubv1.RevokeTokenRequest{Name: name})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "Revoked %s's token; `hubctl agent token rotate %s` issues a new one.\n", r.GetAgent().GetName(), strings.TrimSpace(r.GetAgent().GetName()))
	return nil
}

// fmtSeen is "2006-01-02 15:04:05 (3m ago)", or "-" if never.
func fmtSeen(t *timestamppb.Timestamp, now time.Time) string {
	if t == nil || (t.Seconds == 0 && t.Nanos == 0) {
		return "-"
	}
	return fmtTime(t) + " (" + fmtAgo(t, now) + ")"
}
