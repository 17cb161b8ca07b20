package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// A person runs these commands with their person token
// (--admin-token or HUB_ADMIN_TOKEN): the inbox accepts it; the admin
// token answers as "operator".

// inboxList lists a page of the people's inbox: `hubctl inbox [--state S]
// [--project P] [--page-token T]`.
func inboxList(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("inbox")
	state := fs.String("state", "", "open, answered, expired or withdrawn (default: open first, then the rest)")
	project := fs.String("project", "", "only this project's items")
	limit := fs.Int("limit", 50, "at most this many items")
	page := fs.String("page-token", "", "the next page, as the previous page gave it")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("inbox takes flags only, got %q (to answer: hubctl inbox answer ID allow|deny|TEXT)", pos)
	}
	r, err := c.admin.ListInbox(ctx, &hubv1.ListInboxRequest{State: *state, Project: *project, Limit: int32(*limit), PageToken: *page})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetItems()) == 0 {
		fmt.Fprintln(c.out, "the inbox is empty: no agent is asking anything")
		return nil
	}
	now := time.Now()
	rows := make([][]string, 0, len(r.GetItems()))
	for _, it := range r.GetItems() {
		what := it.GetTitle()
		if len(it.GetOptions()) > 0 {
			what += " [" + strings.Join(it.GetOptions(), " / ") + "]"
		}
		outcome := it.GetState()
		switch {
		case it.GetDecision() != "":
			outcome = it.GetDecision() + " by " + it.GetAnsweredBy()
		case it.GetState() == "answered":
			outcome = "answered by " + it.GetAnsweredBy() + ": " + it.GetAnswer()
		case it.GetState() == "expired" && it.GetRanAt() != nil:
			outcome = "expired, then ran (allowed in the terminal)"
		}
		kind := it.GetKind()
		if it.GetUrgency() == "urgent" {
			kind += " (urgent)"
		}
		rows = append(rows, []string{it.GetId(), kind, it.GetAgent(), it.GetProject(), truncate(oneLine(what), 70),
			fmtAgo(it.GetCreatedAt(), now), truncate(oneLine(outcome), 40)})
	}
	c.table([]string{"ID", "KIND", "AGENT", "PROJECT", "WHAT", "ASKED", "STATE"}, rows)
	if next := r.GetNextPageToken(); next != "" {
		fmt.Fprintf(c.out, "more: hubctl inbox --page-token %s\n", next)
	}
	return nil
}

// inboxAnswer answers an item: `hubctl inbox answer ID allow|deny|TEXT
// [--remember agent|project [--whole-tool]] [--message M]`.
func inboxAnswer(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("inbox answer")
	remember := fs.String("remember", "", "with allow: agent or project, to allow from now on without asking what the item offers: the host's rule (Bash(npm test:*)), else this exact call (the rule expires; hubctl inbox rules lists them)")
	wholeTool := fs.Bool("whole-tool", false, "with --remember: allow every call of the tool, not only what the item offers")
	message := fs.String("message", "", "with allow, deny, raise or lift: a message for the agent (why)")
	usd := fs.Float64("usd-per-day", 0, "with raise (a budget item): the new limit in dollars per UTC day")
	tokens := fs.Int64("tokens-per-day", 0, "with raise (a budget item): the new limit in tokens per UTC day")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usageErrorf("give the item's ID and the answer: allow or deny for an approval, the text for a question, raise or lift for a budget")
	}
	id := pos[0]
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return usageErrorf("item ID %q is not a number (hubctl inbox shows the IDs)", id)
	}
	text := strings.Join(pos[1:], " ")
	req := &hubv1.AnswerInboxItemRequest{Id: id, Remember: *remember, Message: *message, RememberWholeTool: *wholeTool, UsdPerDay: *usd, TokensPerDay: *tokens}
	if kind := c.itemKind(ctx, id); kind == "approval" || kind == "budget" || kind == "" && (text == "allow" || text == "deny" || text == "raise" || text == "lift") {
		req.Decision = text
	} else {
		req.Answer = text
	}
	r, err := c.admin.AnswerInboxItem(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	it := r.GetItem()
	if it.GetKind() == "budget" {
		fmt.Fprintf(c.out, "%s the budget (item %s) as %s; %s is told and may take tasks again\n", map[string]string{"raise": "raised", "lift": "lifted for the rest of the UTC day"}[it.GetDecision()], it.GetId(), it.GetAnsweredBy(), it.GetAgent())
		return nil
	}
	if it.GetDecision() != "" {
		fmt.Fprintf(c.out, "%s %s's %s (item %s) as %s\n", map[string]string{"allow": "allowed", "deny": "denied"}[it.GetDecision()], it.GetAgent(), it.GetTitle(), it.GetId(), it.GetAnsweredBy())
		if it.GetRemember() != "" {
			covers := "this exact call"
			switch {
			case *wholeTool:
				covers = "every " + it.GetTool() + " call"
			case it.GetSuggestedRule() != "":
				covers = it.GetTool() + "(" + it.GetSuggestedRule() + ")"
			}
			fmt.Fprintf(c.out, "remembered for the %s, covering %s: hubctl inbox rules lists it, hubctl inbox rules revoke ID ends it\n", it.GetRemember(), covers)
		}
		return nil
	}
	fmt.Fprintf(c.out, "answered item %s as %s; %s also gets it as a message\n", it.GetId(), it.GetAnsweredBy(), it.GetAgent())
	return nil
}

// itemKind returns the kind of open item id ("" when it is not open or
// the list fails: the hub then says what is wrong with the answer).
func (c *cli) itemKind(ctx context.Context, id string) string {
	r, err := c.admin.ListInbox(ctx, &hubv1.ListInboxRequest{State: "open", Limit: 500})
	if err != nil {
		return ""
	}
	for _, it := range r.GetItems() {
		if it.GetId() == id {
			return it.GetKind()
		}
	}
	return ""
}

// inboxRules lists the remembered allows: `hubctl inbox rules [--all]`.
func inboxRules(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("inbox rules")
	all := fs.Bool("all", false, "include revoked and expired rules")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("inbox rules takes flags only, got %q", pos)
	}
	r, err := c.admin.ListApprovalRules(ctx, &hubv1.ListApprovalRulesRequest{All: *all})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetRules()) == 0 {
		fmt.Fprintln(c.out, "no remembered allows (answer an approval with --remember agent|project to make one)")
		return nil
	}
	rows := make([][]string, 0, len(r.GetRules()))
	for _, ru := range r.GetRules() {
		who := ru.GetAgent()
		if who == "" {
			who = "every agent"
		}
		state := "live"
		if ru.GetRevokedAt() != nil {
			state = "revoked"
		} else if ru.GetExpiresAt().AsTime().Before(time.Now()) {
			state = "expired"
		}
		rows = append(rows, []string{ru.GetId(), ru.GetProject(), who, ru.GetTool(), truncate(oneLine(ruleCovers(ru)), 60), ru.GetCreatedBy(), fmtTime(ru.GetExpiresAt()), state})
	}
	c.table([]string{"ID", "PROJECT", "AGENT", "TOOL", "COVERS", "BY", "EXPIRES", "STATE"}, rows)
	return nil
}

// ruleCovers says what a remembered allow covers.
func ruleCovers(ru *hubv1.ApprovalRule) string {
	switch ru.GetCovers() {
	case "rule":
		return ru.GetTool() + "(" + ru.GetPattern() + ")"
	case "call":
		return "exactly " + ru.GetPattern()
	}
	return "every call (the whole tool)"
}

// inboxRulesRevoke revokes remembered allows: `hubctl inbox rules revoke ID...`.
func inboxRulesRevoke(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("inbox rules revoke")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("give one or more rule IDs (hubctl inbox rules shows them)")
	}
	for _, id := range pos {
		if _, err := c.admin.RevokeApprovalRule(ctx, &hubv1.RevokeApprovalRuleRequest{Id: id}); err != nil {
			return fmt.Errorf("revoke rule %s: %w", id, err)
		}
		if !c.json {
			fmt.Fprintf(c.out, "revoked rule %s: its tool asks a person again\n", id)
		}
	}
	return nil
}

// webhooksAdd adds a webhook: `hubctl webhooks add URL [--kind K]... [--project P]... [--secret S]`.
func webhooksAdd(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("webhooks add")
	var kinds, projects listFlag
	fs.Var(&kinds, "kind", "approval, question, needs_input or budget (repeatable; default: approval, question and budget — needs_input fires at every turn's end)")
	fs.Var(&projects, "project", "only items of this project (repeatable; default: all)")
	secret := fs.String("secret", "", "the HMAC key of X-Hub-Signature-256, 16-256 bytes (default: the hub makes one, shown once)")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("give the receiver's URL, e.g. https://chat.example.com/hooks/abc")
	}
	r, err := c.admin.CreateWebhook(ctx, &hubv1.CreateWebhookRequest{Url: pos[0], Kinds: kinds, Projects: projects, Secret: *secret})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	w := r.GetWebhook()
	fmt.Fprintf(c.out, "added webhook %s: %s (kinds %s, projects %s)\n", w.GetId(), w.GetUrl(), dash(strings.Join(w.GetKinds(), ",")), dash(strings.Join(w.GetProjects(), ",")))
	if *secret == "" {
		fmt.Fprintf(c.out, "\nSecret (shown once): %s\nThe receiver checks X-Hub-Signature-256 = \"sha256=\" + hex HMAC-SHA256 of the body with it.\n", r.GetSecret())
	}
	return nil
}

// webhooksList lists the webhooks: `hubctl webhooks list`.
func webhooksList(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("webhooks list")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	r, err := c.admin.ListWebhooks(ctx, &hubv1.ListWebhooksRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetWebhooks()) == 0 {
		fmt.Fprintln(c.out, "no webhooks (hubctl webhooks add URL adds one)")
		return nil
	}
	rows := make([][]string, 0, len(r.GetWebhooks()))
	for _, w := range r.GetWebhooks() {
		rows = append(rows, []string{w.GetId(), w.GetUrl(), dash(strings.Join(w.GetKinds(), ",")), dash(strings.Join(w.GetProjects(), ",")), fmtTime(w.GetCreatedAt())})
	}
	c.table([]string{"ID", "URL", "KINDS", "PROJECTS", "ADDED"}, rows)
	return nil
}

// webhooksRemove deletes webhooks: `hubctl webhooks rm ID...`.
func webhooksRemove(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("webhooks rm")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("give one or more webhook IDs (hubctl webhooks list shows them)")
	}
	for _, id := range pos {
		if _, err := c.admin.DeleteWebhook(ctx, &hubv1.DeleteWebhookRequest{Id: id}); err != nil {
			return fmt.Errorf("remove webhook %s: %w", id, err)
		}
		if !c.json {
			fmt.Fprintf(c.out, "removed webhook %s and its delivery log\n", id)
		}
	}
	return nil
}

// webhooksLog shows the delivery log: `hubctl webhooks log [ID]`.
func webhooksLog(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("webhooks log")
	limit := fs.Int("limit", 50, "at most this many deliveries")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErrorf("give at most one webhook ID")
	}
	req := &hubv1.ListWebhookDeliveriesRequest{Limit: int32(*limit)}
	if len(pos) == 1 {
		req.WebhookId = pos[0]
	}
	r, err := c.admin.ListWebhookDeliveries(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	rows := make([][]string, 0, len(r.GetDeliveries()))
	for _, d := range r.GetDeliveries() {
		code := "-"
		if d.GetCode() != 0 {
			code = strconv.Itoa(int(d.GetCode()))
		}
		rows = append(rows, []string{d.GetId(), d.GetWebhookId(), d.GetItemId(), d.GetStatus(), strconv.Itoa(int(d.GetAttempts())), code,
			fmtTime(d.GetDoneAt()), dash(truncate(oneLine(d.GetError()), 60))})
	}
	c.table([]string{"ID", "WEBHOOK", "ITEM", "STATUS", "ATTEMPTS", "CODE", "DONE", "ERROR"}, rows)
	return nil
}

// peopleAdd names a person and prints its token once: `hubctl people add NAME [--project P]...`.
func peopleAdd(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("people add")
	var projects listFlag
	fs.Var(&projects, "project", "a project the person may read, post and answer in (repeatable; default: every project)")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("give the person's name (a-z, 0-9, '.', '_', '-')")
	}
	r, err := c.admin.CreatePerson(ctx, &hubv1.CreatePersonRequest{Name: pos[0], Projects: projects})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "Added %s. Person token (shown once; the hub keeps only a hash):\n  %s\n", r.GetPerson().GetName(), r.GetToken())
	fmt.Fprintf(c.out, "\nWith it %s signs into the dashboard, answers the inbox and posts as %s (hubctl: --admin-token or HUB_ADMIN_TOKEN)\nin %s; it administers nothing.\n", pos[0], pos[0], projectsOf(r.GetPerson()))
	return nil
}

// peopleList lists the people: `hubctl people list`.
func peopleList(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("people list")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	r, err := c.admin.ListPeople(ctx, &hubv1.ListPeopleRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	rows := [][]string{{"operator", "(the admin token)", "every project", "-"}}
	for _, p := range r.GetPeople() {
		state := "token works"
		if p.GetRevokedAt() != nil {
			state = "revoked " + fmtTime(p.GetRevokedAt())
		}
		rows = append(rows, []string{p.GetName(), state, projectsOf(p), fmtTime(p.GetCreatedAt())})
	}
	c.table([]string{"NAME", "TOKEN", "PROJECTS", "ADDED"}, rows)
	return nil
}

// peopleRevoke revokes people's tokens: `hubctl people revoke NAME...`.
func peopleRevoke(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("people revoke")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("give one or more names (hubctl people list shows them)")
	}
	for _, n := range pos {
		if _, err := c.admin.RevokePerson(ctx, &hubv1.RevokePersonRequest{Name: n}); err != nil {
			return fmt.Errorf("revoke %s: %w", n, err)
		}
		if !c.json {
			fmt.Fprintf(c.out, "revoked %s's token; what they answered stays\n", n)
		}
	}
	return nil
}

// projectsOf says which projects a person may act in.
func projectsOf(p *hubv1.Person) string {
	if len(p.GetProjects()) == 0 {
		return "every project"
	}
	return strings.Join(p.GetProjects(), ",")
}
