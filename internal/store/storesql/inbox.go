package storesql

import (
	"fmt"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.InboxTx, hub.PersonTx and hub.WebhookTx.

// InsertInboxItem implements hub.InboxTx.
func (x Statements) InsertInboxItem(it *hub.InboxItem) error {
	err := x.DB.QueryRow(`INSERT INTO inbox_items (agent_id, project, kind, title, body, tool, options, urgency, state, call_key,
		created_at, answered_at, answered_by, decision, answer, remember, ran_at, suggested_rule)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		it.AgentID, it.Project, string(it.Kind), it.Title, it.Body, it.Tool, row.Options(it.Options), string(it.Urgency), string(it.State), it.CallKey,
		row.Nanos(it.CreatedAt), row.Nanos(it.AnsweredAt), it.AnsweredBy, it.Decision, it.Answer, it.Remember, row.Nanos(it.RanAt), it.SuggestedRule).Scan(&it.ID)
	if err != nil {
		return fmt.Errorf("insert inbox item: %w", err)
	}
	return nil
}

// InboxItemByID implements hub.InboxTx.
func (x Statements) InboxItemByID(id int64) (*hub.InboxItem, error) {
	it, err := row.InboxItem(x.DB.QueryRow(`SELECT `+row.InboxItemColumns+row.InboxItemFrom+` WHERE i.id = ?`, id))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoInboxItem(id)
	}
	return it, err
}

// InboxItemsByID implements hub.InboxTx.
func (x Statements) InboxItemsByID(ids []int64) ([]*hub.InboxItem, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return all(x.DB, row.InboxItem, `SELECT `+row.InboxItemColumns+row.InboxItemFrom+` WHERE `+x.Dialect.InIDs("i.id"), x.Dialect.IDs(ids))
}

// ListInboxItems implements hub.InboxTx.
func (x Statements) ListInboxItems(q hub.ItemQuery) ([]*hub.InboxItem, error) {
	where, args := []string{"1 = 1"}, []any{}
	if q.AgentID != 0 {
		where, args = append(where, "i.agent_id = ?"), append(args, q.AgentID)
	}
	if q.State != "" {
		where, args = append(where, "i.state = ?"), append(args, string(q.State))
	}
	if q.Closed {
		where = append(where, "i.state <> 'open'")
	}
	if q.Kind != "" {
		where, args = append(where, "i.kind = ?"), append(args, string(q.Kind))
	}
	if q.Project != "" {
		where, args = append(where, "i.project = ?"), append(args, q.Project)
	}
	if len(q.Projects) > 0 {
		where = append(where, "i.project IN (?"+strings.Repeat(", ?", len(q.Projects)-1)+")")
		for _, p := range q.Projects {
			args = append(args, p)
		}
	}
	if q.CallKey != "" {
		where, args = append(where, "i.call_key = ?"), append(args, q.CallKey)
	}
	if !q.Before.IsZero() {
		where, args = append(where, "i.created_at < ?"), append(args, row.Nanos(q.Before))
	}
	order := "i.id DESC"
	switch {
	case q.ByUrgency:
		order = row.UrgencyRank + ", i.id"
		if q.AfterID != 0 {
			where, args = append(where, "("+row.UrgencyRank+", i.id) > (?, ?)"), append(args, q.AfterRank, q.AfterID)
		}
	case q.AfterID != 0:
		where, args = append(where, "i.id < ?"), append(args, q.AfterID)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit)
	return all(x.DB, row.InboxItem, `SELECT `+row.InboxItemColumns+row.InboxItemFrom+` WHERE `+strings.Join(where, " AND ")+` ORDER BY `+order+` LIMIT ?`, args...)
}

// CountOpenItems implements hub.InboxTx.
func (x Statements) CountOpenItems(agentID int64, project string) (agent, inProject int, err error) {
	err = x.DB.QueryRow(`SELECT (SELECT COUNT(*) FROM inbox_items WHERE agent_id = ? AND state = 'open'),
		(SELECT COUNT(*) FROM inbox_items WHERE project = ? AND state = 'open')`, agentID, project).Scan(&agent, &inProject)
	if err != nil {
		return 0, 0, fmt.Errorf("count open inbox items: %w", err)
	}
	return agent, inProject, nil
}

// OpenItemOf implements hub.InboxTx.
func (x Statements) OpenItemOf(agentID int64, kind hub.ItemKind) (*hub.InboxItem, error) {
	it, err := row.InboxItem(x.DB.QueryRow(`SELECT `+row.InboxItemColumns+row.InboxItemFrom+`
		WHERE i.agent_id = ? AND i.kind = ? AND i.state = 'open' ORDER BY i.id DESC LIMIT 1`, agentID, string(kind)))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoOpenItem(kind)
	}
	return it, err
}

// CloseInboxItem implements hub.InboxTx; the item closed is recorded
// (hub.Changes.Closed), so that the calls parked on it wake at the commit.
func (x Statements) CloseInboxItem(id int64, state hub.ItemState, c hub.ItemClose) (bool, error) {
	n, err := x.DB.Exec(`UPDATE inbox_items SET state = ?, answered_at = ?, answered_by = ?, decision = ?, answer = ?, remember = ?
		WHERE id = ? AND state = 'open'`, string(state), row.Nanos(c.At), c.By, c.Decision, c.Answer, c.Remember, id)
	if err != nil {
		return false, fmt.Errorf("close inbox item: %w", err)
	}
	if n != 1 {
		return false, nil
	}
	x.Changes.Closed(id)
	return true, nil
}

// MarkItemRan implements hub.InboxTx.
func (x Statements) MarkItemRan(agentID int64, callKey string, at time.Time) (bool, error) {
	n, err := x.DB.Exec(`UPDATE inbox_items SET ran_at = ? WHERE id = (SELECT id FROM inbox_items
		WHERE agent_id = ? AND kind = 'approval' AND state = 'expired' AND call_key = ? AND ran_at = 0 ORDER BY id DESC LIMIT 1)`,
		row.Nanos(at), agentID, callKey)
	if err != nil {
		return false, fmt.Errorf("mark inbox item ran: %w", err)
	}
	return n == 1, nil
}

// InsertApprovalRule implements hub.InboxTx.
func (x Statements) InsertApprovalRule(r *hub.ApprovalRule) error {
	err := x.DB.QueryRow(`INSERT INTO approval_rules (project, agent_id, tool, created_by, created_at, expires_at, revoked_at, item_id, covers, pattern)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.Project, row.RuleAgent(r), r.Tool, r.CreatedBy, row.Nanos(r.CreatedAt), row.Nanos(r.ExpiresAt), row.Nanos(r.RevokedAt), r.ItemID, r.Covers, r.Pattern).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("insert approval rule: %w", err)
	}
	return nil
}

// ApprovalRulesFor implements hub.InboxTx.
func (x Statements) ApprovalRulesFor(project, tool string, now time.Time) ([]*hub.ApprovalRule, error) {
	return all(x.DB, row.ApprovalRule, `SELECT `+row.ApprovalRuleColumns+row.ApprovalRuleFrom+`
		WHERE r.project = ? AND r.tool = ? AND r.revoked_at = 0 AND r.expires_at > ?`, project, tool, now.UnixNano())
}

// ApprovalRules implements hub.InboxTx.
func (x Statements) ApprovalRules(now time.Time, includeEnded bool) ([]*hub.ApprovalRule, error) {
	if includeEnded {
		return all(x.DB, row.ApprovalRule, `SELECT `+row.ApprovalRuleColumns+row.ApprovalRuleFrom+` ORDER BY r.id DESC`)
	}
	return all(x.DB, row.ApprovalRule, `SELECT `+row.ApprovalRuleColumns+row.ApprovalRuleFrom+`
		WHERE r.revoked_at = 0 AND r.expires_at > ? ORDER BY r.id DESC`, now.UnixNano())
}

// ApprovalRuleByID implements hub.InboxTx.
func (x Statements) ApprovalRuleByID(id int64) (*hub.ApprovalRule, error) {
	r, err := row.ApprovalRule(x.DB.QueryRow(`SELECT `+row.ApprovalRuleColumns+row.ApprovalRuleFrom+` WHERE r.id = ?`, id))
	if x.DB.IsNoRows(err) {
		return nil, hub.Errorf(hub.ENOTFOUND, "approval rule %d does not exist: `hubctl inbox rules` lists them", id)
	}
	return r, err
}

// RevokeApprovalRule implements hub.InboxTx.
func (x Statements) RevokeApprovalRule(id int64, at time.Time) error {
	n, err := x.DB.Exec(`UPDATE approval_rules SET revoked_at = CASE WHEN revoked_at = 0 THEN ? ELSE revoked_at END WHERE id = ?`, at.UnixNano(), id)
	if err != nil {
		return fmt.Errorf("revoke approval rule: %w", err)
	}
	if n == 0 {
		return hub.Errorf(hub.ENOTFOUND, "approval rule %d does not exist: `hubctl inbox rules` lists them", id)
	}
	return nil
}

// InsertPerson implements hub.PersonTx.
func (x Statements) InsertPerson(p *hub.Person, tokenHash []byte) error {
	err := x.DB.QueryRow(`INSERT INTO people (name, token_hash, created_at, revoked_at, projects) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		p.Name, tokenHash, row.Nanos(p.CreatedAt), row.Nanos(p.RevokedAt), strings.Join(p.Projects, ",")).Scan(&p.ID)
	if err != nil {
		return fmt.Errorf("insert person: %w", err)
	}
	return nil
}

func (x Statements) personWhere(where string, arg any) (*hub.Person, error) {
	p, err := row.Person(x.DB.QueryRow(`SELECT `+row.PersonColumns+` FROM people WHERE `+where, arg))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoPerson()
	}
	return p, err
}

// PersonByName implements hub.PersonTx.
func (x Statements) PersonByName(name string) (*hub.Person, error) {
	return x.personWhere(`name = ?`, name)
}

// PersonByTokenHash implements hub.PersonTx.
func (x Statements) PersonByTokenHash(hash []byte) (*hub.Person, error) {
	return x.personWhere(`token_hash = ?`, hash)
}

// ActivePerson implements hub.PersonTx.
func (x Statements) ActivePerson(name string) (bool, error) {
	var active bool
	err := x.DB.QueryRow(`SELECT EXISTS (SELECT 1 FROM people WHERE name = ? AND revoked_at = 0)`, name).Scan(&active)
	return active, err
}

// People implements hub.PersonTx.
func (x Statements) People() ([]*hub.Person, error) {
	return all(x.DB, row.Person, `SELECT `+row.PersonColumns+` FROM people ORDER BY name`)
}

// RevokePerson implements hub.PersonTx.
func (x Statements) RevokePerson(name string, at time.Time) error {
	n, err := x.DB.Exec(`UPDATE people SET token_hash = NULL, revoked_at = CASE WHEN revoked_at = 0 THEN ? ELSE revoked_at END WHERE name = ?`, at.UnixNano(), name)
	if err != nil {
		return fmt.Errorf("revoke person: %w", err)
	}
	if n == 0 {
		return hub.Errorf(hub.ENOTFOUND, "no person named %q: `hubctl people list` shows them", name)
	}
	return nil
}

// InsertWebhook implements hub.WebhookTx.
func (x Statements) InsertWebhook(w *hub.Webhook) error {
	err := x.DB.QueryRow(`INSERT INTO webhooks (url, kinds, projects, secret, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		w.URL, row.Kinds(w), strings.Join(w.Projects, ","), w.Secret, row.Nanos(w.CreatedAt)).Scan(&w.ID)
	if err != nil {
		return fmt.Errorf("insert webhook: %w", err)
	}
	return nil
}

// Webhooks implements hub.WebhookTx.
func (x Statements) Webhooks() ([]*hub.Webhook, error) {
	return all(x.DB, row.Webhook, `SELECT `+row.WebhookColumns+` FROM webhooks ORDER BY id`)
}

// DeleteWebhook implements hub.WebhookTx.
func (x Statements) DeleteWebhook(id int64) error {
	n, err := x.DB.Exec(`DELETE FROM webhooks WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	if n == 0 {
		return hub.Errorf(hub.ENOTFOUND, "webhook %d does not exist: `hubctl webhooks list` shows them", id)
	}
	return nil
}

// InsertWebhookDelivery implements hub.WebhookTx.
func (x Statements) InsertWebhookDelivery(d *hub.WebhookDelivery, keep int) error {
	err := x.DB.QueryRow(`INSERT INTO webhook_deliveries (webhook_id, item_id, status, attempts, code, error, created_at, done_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		d.WebhookID, d.ItemID, d.Status, d.Attempts, d.Code, d.Error, row.Nanos(d.CreatedAt), row.Nanos(d.DoneAt)).Scan(&d.ID)
	if err != nil {
		return fmt.Errorf("log webhook delivery: %w", err)
	}
	_, err = x.DB.Exec(`DELETE FROM webhook_deliveries WHERE webhook_id = ? AND id NOT IN
		(SELECT id FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT ?)`, d.WebhookID, d.WebhookID, keep)
	return err
}

// WebhookDeliveries implements hub.WebhookTx.
func (x Statements) WebhookDeliveries(webhookID int64, limit int) ([]*hub.WebhookDelivery, error) {
	if webhookID == 0 {
		return all(x.DB, row.WebhookDelivery, `SELECT `+row.WebhookDeliveryColumns+` FROM webhook_deliveries ORDER BY id DESC LIMIT ?`, limit)
	}
	return all(x.DB, row.WebhookDelivery, `SELECT `+row.WebhookDeliveryColumns+` FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT ?`, webhookID, limit)
}
