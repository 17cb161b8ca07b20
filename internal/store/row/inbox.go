package row

import (
	"encoding/json"
	"strings"

	"github.com/agenthub/hub/internal/hub"
)

// InboxItemColumns are the columns of inbox_items i joined with agents a
// that InboxItem scans.
const InboxItemColumns = `i.id, i.kind, i.agent_id, a.name, i.project, i.title, i.body, i.tool, i.options, i.urgency, i.state,
	i.call_key, i.created_at, i.answered_at, i.answered_by, i.decision, i.answer, i.remember, i.ran_at, i.suggested_rule`

// InboxItemFrom is the FROM clause of InboxItemColumns.
const InboxItemFrom = ` FROM inbox_items i JOIN agents a ON a.id = i.agent_id`

// InboxItem scans InboxItemColumns.
func InboxItem(s Scanner) (*hub.InboxItem, error) {
	var it hub.InboxItem
	var kind, urgency, state, options string
	var created, answered, ran int64
	if err := s.Scan(&it.ID, &kind, &it.AgentID, &it.AgentName, &it.Project, &it.Title, &it.Body, &it.Tool, &options, &urgency, &state,
		&it.CallKey, &created, &answered, &it.AnsweredBy, &it.Decision, &it.Answer, &it.Remember, &ran, &it.SuggestedRule); err != nil {
		return nil, err
	}
	it.Kind, it.Urgency, it.State = hub.ItemKind(kind), hub.Urgency(urgency), hub.ItemState(state)
	it.CreatedAt, it.AnsweredAt, it.RanAt = Time(created), Time(answered), Time(ran)
	if options != "" {
		if err := json.Unmarshal([]byte(options), &it.Options); err != nil {
			return nil, err
		}
	}
	return &it, nil
}

// Options returns a question's options as their column holds them.
func Options(opts []string) string {
	if len(opts) == 0 {
		return ""
	}
	b, _ := json.Marshal(opts) // strings always marshal
	return string(b)
}

// ApprovalRuleColumns are the columns of approval_rules r (with its
// agent's name, ” for a project's rule) that ApprovalRule scans.
const ApprovalRuleColumns = `r.id, r.project, COALESCE(r.agent_id, 0), COALESCE(a.name, ''), r.tool, r.created_by, r.created_at,
	r.expires_at, r.revoked_at, r.item_id, r.covers, r.pattern`

// ApprovalRuleFrom is the FROM clause of ApprovalRuleColumns.
const ApprovalRuleFrom = ` FROM approval_rules r LEFT JOIN agents a ON a.id = r.agent_id`

// ApprovalRule scans ApprovalRuleColumns.
func ApprovalRule(s Scanner) (*hub.ApprovalRule, error) {
	var r hub.ApprovalRule
	var created, expires, revoked int64
	if err := s.Scan(&r.ID, &r.Project, &r.AgentID, &r.AgentName, &r.Tool, &r.CreatedBy, &created, &expires, &revoked, &r.ItemID, &r.Covers, &r.Pattern); err != nil {
		return nil, err
	}
	r.CreatedAt, r.ExpiresAt, r.RevokedAt = Time(created), Time(expires), Time(revoked)
	return &r, nil
}

// UrgencyRank is the SQL expression that orders open items urgent first.
const UrgencyRank = `(CASE i.urgency WHEN 'urgent' THEN 0 ELSE 1 END)`

// RuleAgent returns the agent_id column of a rule: NULL for a project's.
func RuleAgent(r *hub.ApprovalRule) any {
	if r.AgentID == 0 {
		return nil
	}
	return r.AgentID
}

// PersonColumns are the columns of people that Person scans.
const PersonColumns = `id, name, created_at, revoked_at, projects`

// Person scans PersonColumns.
func Person(s Scanner) (*hub.Person, error) {
	var p hub.Person
	var created, revoked int64
	var projects string
	if err := s.Scan(&p.ID, &p.Name, &created, &revoked, &projects); err != nil {
		return nil, err
	}
	p.CreatedAt, p.RevokedAt, p.Projects = Time(created), Time(revoked), split(projects)
	return &p, nil
}

// WebhookColumns are the columns of webhooks that Webhook scans.
const WebhookColumns = `id, url, kinds, projects, secret, created_at`

// Webhook scans WebhookColumns.
func Webhook(s Scanner) (*hub.Webhook, error) {
	var w hub.Webhook
	var kinds, projects string
	var created int64
	if err := s.Scan(&w.ID, &w.URL, &kinds, &projects, &w.Secret, &created); err != nil {
		return nil, err
	}
	for _, k := range split(kinds) {
		w.Kinds = append(w.Kinds, hub.ItemKind(k))
	}
	w.Projects, w.CreatedAt = split(projects), Time(created)
	return &w, nil
}

// Kinds returns a webhook's kinds as their column holds them.
func Kinds(w *hub.Webhook) string {
	ks := make([]string, len(w.Kinds))
	for i, k := range w.Kinds {
		ks[i] = string(k)
	}
	return strings.Join(ks, ",")
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// WebhookDeliveryColumns are the columns of webhook_deliveries that
// WebhookDelivery scans.
const WebhookDeliveryColumns = `id, webhook_id, item_id, status, attempts, code, error, created_at, done_at`

// WebhookDelivery scans WebhookDeliveryColumns.
func WebhookDelivery(s Scanner) (*hub.WebhookDelivery, error) {
	var d hub.WebhookDelivery
	var created, done int64
	if err := s.Scan(&d.ID, &d.WebhookID, &d.ItemID, &d.Status, &d.Attempts, &d.Code, &d.Error, &created, &done); err != nil {
		return nil, err
	}
	d.CreatedAt, d.DoneAt = Time(created), Time(done)
	return &d, nil
}
