package hub

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// The inbox holds what agents ask of people (SPEC §13): a host's
// permission prompt relayed by its PermissionRequest hook (an approval), a
// question asked with ask_human, an agent sitting at its prompt waiting
// for input. This file holds the rules, values in and decisions out;
// inbox_service.go loads, decides and saves.

// ItemKind is what an inbox item asks of a person.
type ItemKind string

// The kinds of inbox items.
const (
	KindApproval   ItemKind = "approval"    // allow or deny a tool call
	KindQuestion   ItemKind = "question"    // answer in words or pick an option
	KindNeedsInput ItemKind = "needs_input" // the agent waits at its prompt
	KindBudget     ItemKind = "budget"      // a budget is reached: raise or lift it (budget.go)
)

// ItemState is where an inbox item stands.
type ItemState string

// The states of an inbox item. Only an open item can change, and only once.
const (
	ItemOpen      ItemState = "open"
	ItemAnswered  ItemState = "answered"
	ItemExpired   ItemState = "expired"   // nobody answered in time: left to the terminal
	ItemWithdrawn ItemState = "withdrawn" // the agent moved on (a prompt, a tool use, the session ended)
)

// Urgency ranks an item: urgent items come first and notify.
type Urgency string

// The urgencies.
const (
	UrgencyNormal Urgency = "normal"
	UrgencyUrgent Urgency = "urgent"
)

// Decisions on an approval.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// Remember scopes of an allow: the rule it leaves behind.
const (
	RememberAgent   = "agent"
	RememberProject = "project"
)

// MaxApprovalInput bounds the tool input of an approval, held exactly as
// the call would run: a hook does not relay a larger call (its host asks
// at the terminal), rather than show a person part of it.
const MaxApprovalInput = 64 << 10

// Limits of what an item holds.
const (
	maxItemTitle   = 300
	maxItemBody    = 16 << 10
	maxItemAnswer  = 8 << 10
	maxItemOptions = 10
	maxOptionLen   = 100
	maxToolName    = 200
	maxCallKey     = 128
)

// InboxItem is one thing an agent asks of a person.
type InboxItem struct {
	ID        int64
	Kind      ItemKind
	AgentID   int64
	AgentName string // filled when read back
	Project   string
	Title     string // one line: what is asked
	// Body is the detail: for an approval, the tool's input as the host
	// gave it (JSON); for a question, its text.
	Body    string
	Tool    string   // an approval's tool (Bash, Edit, …)
	Options []string // a question's choices, if any
	Urgency Urgency
	State   ItemState
	// CallKey names the host's tool call an approval is about, so that a
	// later PostToolUse of the same call can record that it ran; for a
	// budget item, the budget: "agent" (the agent's own) or "project".
	CallKey string
	// SuggestedRule is the host's rule an "always allow" of this approval
	// covers (Bash's "npm test:*"); empty: the exact call.
	SuggestedRule string
	CreatedAt     time.Time
	AnsweredAt    time.Time // when it left the open state
	AnsweredBy    string    // the person ("operator" for the admin token) or "rule N"
	Decision      string    // an approval's: allow or deny
	Answer        string    // a question's answer; a deny's or an allow's message
	Remember      string    // agent or project: the allow was remembered as a rule
	RanAt         time.Time // an expired approval's call ran (answered at the terminal)
}

// Open reports whether the item still waits for a person.
func (it *InboxItem) Open() bool { return it.State == ItemOpen }

// What a remembered allow covers: what the person saw when answering.
const (
	// CoversRule: the host's suggested rule (Pattern, such as Bash's
	// "npm test:*": a command that is "npm test" or starts with "npm test ",
	// with no shell operator, redirection or substitution in it).
	CoversRule = "rule"
	// CoversCall: the exact call (Pattern: its input as canonical JSON, a
	// description left out).
	CoversCall = "call"
	// CoversTool: every call of the tool; only when the person chose it
	// (and the rules remembered before calls were scoped).
	CoversTool = "tool"
)

// ApprovalRule is a remembered allow: requests of Tool by the agent (or by
// any agent of Project when AgentID is 0) that it covers are allowed
// without a person until ExpiresAt.
type ApprovalRule struct {
	ID        int64
	Project   string
	AgentID   int64  // 0: every agent of the project
	AgentName string // filled when read back
	Tool      string
	Covers    string // CoversRule, CoversCall or CoversTool
	Pattern   string // the rule's content or the call's input; empty for CoversTool
	CreatedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt time.Time
	ItemID    int64 // the answer that made it
}

// Scope says whom the rule covers: RememberAgent or RememberProject.
func (r *ApprovalRule) Scope() string {
	if r.AgentID == 0 {
		return RememberProject
	}
	return RememberAgent
}

// Live reports whether the rule answers requests at now.
func (r *ApprovalRule) Live(now time.Time) bool {
	return r.RevokedAt.IsZero() && now.Before(r.ExpiresAt)
}

// Allows reports whether the rule covers a call of its tool with input.
func (r *ApprovalRule) Allows(input string) bool {
	switch r.Covers {
	case CoversTool:
		return true
	case CoversCall:
		return canonicalInput(input) == r.Pattern
	case CoversRule:
		var m struct {
			Command string `json:"command"`
		}
		return json.Unmarshal([]byte(input), &m) == nil && bashRuleMatches(r.Pattern, m.Command)
	}
	return false
}

// Describe is the rule as a person reads it: Bash(npm test:*), the exact
// call, or every call of the tool.
func (r *ApprovalRule) Describe() string {
	switch r.Covers {
	case CoversRule:
		return r.Tool + "(" + r.Pattern + ")"
	case CoversCall:
		return r.Tool + " exactly " + cutText(summarize(r.Pattern), 200)
	}
	return "every " + r.Tool + " call"
}

// shellOperators are what makes a command more than one program with its
// arguments: a rule's prefix never covers a command with one of them.
const shellOperators = ";&|`$<>()\n\r"

// bashRuleMatches reports whether command falls under a Bash rule of the
// host: "npm test:*" covers "npm test" and "npm test …", "npm test" only
// itself; a command with a shell operator, redirection or substitution
// falls under no prefix.
func bashRuleMatches(rule, command string) bool {
	command = strings.TrimSpace(command)
	prefix, isPrefix := strings.CutSuffix(rule, ":*")
	if !isPrefix {
		return command == rule
	}
	if strings.ContainsAny(command, shellOperators) {
		return false
	}
	return command == prefix || strings.HasPrefix(command, prefix+" ")
}

// checkSuggestedRule returns the host's suggested rule for a call of tool
// when the hub can hold calls to it ("" otherwise, and the allow covers
// the exact call): a Bash command or command prefix on one line.
func checkSuggestedRule(tool, rule string) string {
	prefix, _ := strings.CutSuffix(rule, ":*")
	if tool != "Bash" || strings.TrimSpace(prefix) == "" || len(rule) > maxItemTitle || checkLine("suggested_rule", rule) != nil ||
		strings.ContainsAny(prefix, shellOperators) {
		return ""
	}
	return rule
}

// canonicalInput is a tool input as a rule holds it: the JSON with its
// keys sorted and a description (which a host may reword) left out.
func canonicalInput(input string) string {
	var v any
	if json.Unmarshal([]byte(input), &v) != nil {
		return input
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "description")
	}
	b, _ := json.Marshal(v) // decoded JSON: always marshals
	return string(b)
}

// ruleScope is what remembering an allow of it covers: the whole tool when
// the person chose so, else the host's rule, else the exact call.
func ruleScope(it *InboxItem, wholeTool bool) (covers, pattern string) {
	switch {
	case wholeTool:
		return CoversTool, ""
	case it.SuggestedRule != "":
		return CoversRule, it.SuggestedRule
	}
	return CoversCall, canonicalInput(it.Body)
}

// MatchRule returns the live rule that allows agentID's request of tool
// with input in project at now: one for the agent before one for the
// whole project, then the newest. nil when none does.
func MatchRule(rules []*ApprovalRule, agentID int64, project, tool, input string, now time.Time) *ApprovalRule {
	var best *ApprovalRule
	for _, r := range rules {
		if !r.Live(now) || r.Project != project || r.Tool != tool || (r.AgentID != 0 && r.AgentID != agentID) || !r.Allows(input) {
			continue
		}
		switch {
		case best == nil,
			r.AgentID != 0 && best.AgentID == 0,
			(r.AgentID != 0) == (best.AgentID != 0) && r.ID > best.ID:
			best = r
		}
	}
	return best
}

// Answer is a person's answer to an item.
type Answer struct {
	Decision string // approval: allow or deny
	Message  string // approval: said to the agent with the decision
	Remember string // approval allowed: agent or project
	// WholeTool: the remembered allow covers every call of the tool, not
	// only what the item offered.
	WholeTool bool
	Text      string // question or needs input: the answer
	// USDPerDay and TokensPerDay are a budget's new limits (Decision
	// raise); 0 keeps a limit as it is.
	USDPerDay    float64
	TokensPerDay int64
}

// CheckAnswer returns EINVALID unless a fits it, and EPRECONDITION when
// it is no longer open; it returns the answer as stored (the text kept in
// Answer, the decision in Decision).
func CheckAnswer(it *InboxItem, a Answer) (decision, text string, err error) {
	if !it.Open() {
		by := ""
		if it.AnsweredBy != "" {
			by = " by " + it.AnsweredBy
		}
		return "", "", Errorf(EPRECONDITION, "inbox item %d is %s%s: only an open item can be answered", it.ID, it.State, by)
	}
	if len(a.Message) > maxItemAnswer || len(a.Text) > maxItemAnswer {
		return "", "", Errorf(EINVALID, "the answer is longer than %d bytes: keep it short, or post a message", maxItemAnswer)
	}
	if !utf8.ValidString(a.Message) || !utf8.ValidString(a.Text) {
		return "", "", Errorf(EINVALID, "the answer must be valid UTF-8 text")
	}
	if it.Kind != KindBudget && (a.USDPerDay != 0 || a.TokensPerDay != 0) {
		return "", "", Errorf(EINVALID, `inbox item %d is a %s: usd_per_day and tokens_per_day answer a budget item only`, it.ID, strings.ReplaceAll(string(it.Kind), "_", " "))
	}
	if it.Kind == KindApproval {
		if a.Text != "" {
			return "", "", Errorf(EINVALID, `inbox item %d is an approval: answer with "decision": "allow" or "deny" (and an optional "message"), not with "answer"`, it.ID)
		}
		switch a.Decision {
		case DecisionAllow, DecisionDeny:
		case "":
			return "", "", Errorf(EINVALID, `inbox item %d is an approval: give "decision": "allow" or "deny"`, it.ID)
		default:
			return "", "", Errorf(EINVALID, `decision %q is not one: give "allow" or "deny"`, a.Decision)
		}
		switch a.Remember {
		case "":
		case RememberAgent, RememberProject:
			if a.Decision != DecisionAllow {
				return "", "", Errorf(EINVALID, `remember applies to an allow only: a deny is never remembered`)
			}
		default:
			return "", "", Errorf(EINVALID, `remember %q is not a scope: give "agent" (this agent) or "project" (every agent of %s)`, a.Remember, it.Project)
		}
		if a.WholeTool && a.Remember == "" {
			return "", "", Errorf(EINVALID, `remember_whole_tool applies to a remembered allow: give "remember": "agent" or "project" with it`)
		}
		return a.Decision, a.Message, nil
	}
	if it.Kind == KindBudget {
		return checkBudgetAnswer(it, a)
	}
	if a.Decision != "" || a.Remember != "" || a.WholeTool {
		return "", "", Errorf(EINVALID, `inbox item %d is a %s: answer with "answer": "…" (decision and remember are for approvals)`, it.ID, strings.ReplaceAll(string(it.Kind), "_", " "))
	}
	text = strings.TrimSpace(a.Text)
	if text == "" && it.Kind == KindQuestion {
		return "", "", Errorf(EINVALID, `inbox item %d is a question: give the answer in "answer"`, it.ID)
	}
	return "", text, nil
}

// CheckOptions returns EINVALID unless opts are a question's choices.
func CheckOptions(opts []string) error {
	if len(opts) > maxItemOptions {
		return Errorf(EINVALID, "options has %d choices; the limit is %d", len(opts), maxItemOptions)
	}
	seen := map[string]bool{}
	for i, o := range opts {
		f := fmt.Sprintf("options[%d]", i)
		if strings.TrimSpace(o) == "" {
			return Errorf(EINVALID, "%s is empty: each option is the short text of one choice", f)
		}
		if len(o) > maxOptionLen {
			return Errorf(EINVALID, "%s is %d bytes; the limit is %d", f, len(o), maxOptionLen)
		}
		if err := checkLine(f, o); err != nil {
			return err
		}
		if seen[o] {
			return Errorf(EINVALID, "%s repeats %q: give each choice once", f, o)
		}
		seen[o] = true
	}
	return nil
}

// ParseUrgency returns the urgency named by s ("" is normal).
func ParseUrgency(s string) (Urgency, error) {
	switch Urgency(s) {
	case "", UrgencyNormal:
		return UrgencyNormal, nil
	case UrgencyUrgent:
		return UrgencyUrgent, nil
	}
	return "", Errorf(EINVALID, `urgency %q is not one: give "normal" (the default) or "urgent"`, s)
}

// ParseItemState returns the state named by s ("" for all).
func ParseItemState(s string) (ItemState, error) {
	switch st := ItemState(s); st {
	case "", ItemOpen, ItemAnswered, ItemExpired, ItemWithdrawn:
		return st, nil
	}
	return "", Errorf(EINVALID, "state %q is not one: give open, answered, expired or withdrawn (or nothing for all)", s)
}

// inboxPage is where a page of the inbox starts: among the open items
// after (rank, id) in their order, or among the others below id. Its
// token: "o.RANK.ID" or "c.ID" ("c.0": the others from the newest); an
// empty token is the first page.
type inboxPage struct {
	open bool
	rank int
	id   int64
}

func (p inboxPage) String() string {
	if p.open {
		return fmt.Sprintf("o.%d.%d", p.rank, p.id)
	}
	return fmt.Sprintf("c.%d", p.id)
}

// parseInboxPage reads a page token ("" is the first page).
func parseInboxPage(tok string) (inboxPage, error) {
	if tok == "" {
		return inboxPage{open: true}, nil
	}
	var p inboxPage
	if strings.HasPrefix(tok, "o.") {
		p.open = true
		if c, err := fmt.Sscanf(tok, "o.%d.%d", &p.rank, &p.id); err == nil && c == 2 && (p.rank == 0 || p.rank == 1) && p.id > 0 && p.String() == tok {
			return p, nil
		}
	} else if c, err := fmt.Sscanf(tok, "c.%d", &p.id); err == nil && c == 1 && p.id >= 0 && p.String() == tok {
		return p, nil
	}
	return inboxPage{}, Errorf(EINVALID, "page_token %q is not one the inbox gave: pass next_page_token as it came, or nothing for the first page", tok)
}

// urgencyRank is an open item's rank in the inbox: 0 urgent, 1 normal.
func urgencyRank(it *InboxItem) int {
	if it.Urgency == UrgencyUrgent {
		return 0
	}
	return 1
}

// approvalTitle is the one line an approval shows: the tool and the
// start of what it would run.
func approvalTitle(tool, summary string) string {
	summary = strings.Join(strings.Fields(summary), " ")
	if summary == "" {
		return "Allow " + tool + "?"
	}
	return "Allow " + tool + "(" + cutText(summary, 200) + ")?"
}

// summarize returns the part of a tool's input a person reads first, from
// the arguments that run: its command, SQL, file path, URL or pattern;
// else the arguments as JSON. A description the model wrote is never the
// summary: it says what the call is meant to do, not what it does.
func summarize(input string) string {
	var m map[string]any
	if json.Unmarshal([]byte(input), &m) == nil {
		for _, k := range []string{"command", "cmd", "sql", "query", "statement", "file_path", "path", "notebook_path", "url", "pattern"} {
			if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
				return oneLine(s)
			}
		}
		delete(m, "description")
		b, _ := json.Marshal(m) // decoded JSON: always marshals
		return oneLine(string(b))
	}
	return oneLine(input)
}

// oneLine turns s into one line fit for checkLine: controls and line
// breaks become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f' || r == '\u061c' {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}
