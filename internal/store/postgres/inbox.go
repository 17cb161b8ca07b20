package postgres

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.InboxTx, hub.PersonTx and hub.WebhookTx.

// scanAll runs q and scans each row with scan.
func scanAll[T any](t *Tx, scan func(row.Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := t.query(q, args...)
	return scanRows(rows, err, func(r pgx.Rows) (T, error) { return scan(r) })
}

// InsertInboxItem implements hub.InboxTx.
func (t *Tx) InsertInboxItem(it *hub.InboxItem) error {
	err := t.queryRow(`INSERT INTO inbox_items (agent_id, project, kind, title, body, tool, options, urgency, state, call_key,
		created_at, answered_at, answered_by, decision, answer, remember, ran_at, suggested_rule)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING id`,
		it.AgentID, it.Project, string(it.Kind), it.Title, it.Body, it.Tool, row.Options(it.Options), string(it.Urgency), string(it.State), it.CallKey,
		row.Nanos(it.CreatedAt), row.Nanos(it.AnsweredAt), it.AnsweredBy, it.Decision, it.Answer, it.Remember, row.Nanos(it.RanAt), it.SuggestedRule).Scan(&it.ID)
	if err != nil {
		return fmt.Errorf("insert inbox item: %w", mapErr(err))
	}
	return nil
}

// InboxItemByID implements hub.InboxTx.
func (t *Tx) InboxItemByID(id int64) (*hub.InboxItem, error) {
	it, err := row.InboxItem(t.queryRow(`SELECT `+row.InboxItemColumns+row.InboxItemFrom+` WHERE i.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.NoInboxItem(id)
	}
	return it, err
}

// InboxItemsByID implements hub.InboxTx.
func (t *Tx) InboxItemsByID(ids []int64) ([]*hub.InboxItem, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return scanAll(t, row.InboxItem, `SELECT `+row.InboxItemColumns+row.InboxItemFrom+` WHERE i.id = ANY($1)`, ids)
}

// ListInboxItems implements hub.InboxTx.
func (t *Tx) ListInboxItems(q hub.ItemQuery) ([]*hub.InboxItem, error) {
	where, args := []string{"1 = 1"}, []any{}
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if q.AgentID != 0 {
		add("i.agent_id = $%d", q.AgentID)
	}
	if q.State != "" {
		add("i.state = $%d", string(q.State))
	}
	if q.Project != "" {
		add("i.project = $%d", q.Project)
	}
	if len(q.Projects) > 0 {
		add("i.project = ANY($%d::text[])", q.Projects)
	}
	if q.CallKey != "" {
		add("i.call_key = $%d", q.CallKey)
	}
	if q.Closed {
		where = append(where, "i.state <> 'open'")
	}
	if q.Kind != "" {
		add("i.kind = $%d", string(q.Kind))
	}
	if !q.Before.IsZero() {
		add("i.created_at < $%d", row.Nanos(q.Before))
	}
	order := "i.id DESC"
	switch {
	case q.ByUrgency:
		order = row.UrgencyRank + ", i.id"
		if q.AfterID != 0 {
			args = append(args, q.AfterRank, q.AfterID)
			where = append(where, fmt.Sprintf("(%s, i.id) > ($%d, $%d)", row.UrgencyRank, len(args)-1, len(args)))
		}
	case q.AfterID != 0:
		add("i.id < $%d", q.AfterID)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit)
	return scanAll(t, row.InboxItem, `SELECT `+row.InboxItemColumns+row.InboxItemFrom+` WHERE `+strings.Join(where, " AND ")+fmt.Sprintf(` ORDER BY %s LIMIT $%d`, order, len(args)), args...)
}

// CountOpenItems implements hub.InboxTx.
func (t *Tx) CountOpenItems(agentID int64, project string) (agent, inProject int, err error) {
	err = t.queryRow(`SELECT (SELECT COUNT(*) FROM inbox_items WHERE agent_id = $1 AND state = 'open'),
		(SELECT COUNT(*) FROM inbox_items WHERE project = $2 AND state = 'open')`, agentID, project).Scan(&agent, &inProject)
	if err != nil {
		return 0, 0, fmt.Errorf("count open inbox items: %w", err)
	}
	return agent, inProject, nil
}

// OpenItemOf implements hub.InboxTx.
func (t *Tx) OpenItemOf(agentID int64, kind hub.ItemKind) (*hub.InboxItem, error) {
	it, err := row.InboxItem(t.queryRow(`SELECT `+row.InboxItemColumns+row.InboxItemFrom+`
		WHERE i.agent_id = $1 AND i.kind = $2 AND i.state = 'open' ORDER BY i.id DESC LIMIT 1`, agentID, string(kind)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.NoOpenItem(kind)
	}
	return it, err
}

// CloseInboxItem implements hub.InboxTx.
func (t *Tx) CloseInboxItem(id int64, state hub.ItemState, c hub.ItemClose) (bool, error) {
	res, err := t.exec(`UPDATE inbox_items SET state = $1, answered_at = $2, answered_by = $3, decision = $4, answer = $5, remember = $6
		WHERE id = $7 AND state = 'open'`, string(state), row.Nanos(c.At), c.By, c.Decision, c.Answer, c.Remember, id)
	if err != nil {
		return false, fmt.Errorf("close inbox item: %w", err)
	}
	return res.RowsAffected() == 1, nil
}

// MarkItemRan implements hub.InboxTx.
func (t *Tx) MarkItemRan(agentID int64, callKey string, at time.Time) (bool, error) {
	res, err := t.exec(`UPDATE inbox_items SET ran_at = $1 WHERE id = (SELECT id FROM inbox_items
		WHERE agent_id = $2 AND kind = 'approval' AND state = 'expired' AND call_key = $3 AND ran_at = 0 ORDER BY id DESC LIMIT 1)`,
		row.Nanos(at), agentID, callKey)
	if err != nil {
		return false, fmt.Errorf("mark inbox item ran: %w", err)
	}
	return res.RowsAffected() == 1, nil
}

// InsertApprovalRule implements hub.InboxTx.
func (t *Tx) InsertApprovalRule(r *hub.ApprovalRule) error {
	err := t.queryRow(`INSERT INTO approval_rules (project, agent_id, tool, created_by, created_at, expires_at, revoked_at, item_id, covers, pattern)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		r.Project, row.RuleAgent(r), r.Tool, r.CreatedBy, row.Nanos(r.CreatedAt), row.Nanos(r.ExpiresAt), row.Nanos(r.RevokedAt), r.ItemID, r.Covers, r.Pattern).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("insert approval rule: %w", mapErr(err))
	}
	return nil
}

// ApprovalRulesFor implements hub.InboxTx.
func (t *Tx) ApprovalRulesFor(project, tool string, now time.Time) ([]*hub.ApprovalRule, error) {
	return scanAll(t, row.ApprovalRule, `SELECT `+row.ApprovalRuleColumns+row.ApprovalRuleFrom+`
		WHERE r.project = $1 AND r.tool = $2 AND r.revoked_at = 0 AND r.expires_at > $3`, project, tool, now.UnixNano())
}

// ListApprovalRules implements hub.InboxTx.
func (t *Tx) ListApprovalRules(now time.Time, all bool) ([]*hub.ApprovalRule, error) {
	if all {
		return scanAll(t, row.ApprovalRule, `SELECT `+row.ApprovalRuleColumns+row.ApprovalRuleFrom+` ORDER BY r.id DESC`)
	}
	return scanAll(t, row.ApprovalRule, `SELECT `+row.ApprovalRuleColumns+row.ApprovalRuleFrom+`
		WHERE r.revoked_at = 0 AND r.expires_at > $1 ORDER BY r.id DESC`, now.UnixNano())
}

// ApprovalRuleByID implements hub.InboxTx.
func (t *Tx) ApprovalRuleByID(id int64) (*hub.ApprovalRule, error) {
	r, err := row.ApprovalRule(t.queryRow(`SELECT `+row.ApprovalRuleColumns+row.ApprovalRuleFrom+` WHERE r.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.Errorf(hub.ENOTFOUND, "approval rule %d does not exist: `hubctl inbox rules` lists them", id)
	}
	return r, err
}

// RevokeApprovalRule implements hub.InboxTx.
func (t *Tx) RevokeApprovalRule(id int64, at time.Time) error {
	res, err := t.exec(`UPDATE approval_rules SET revoked_at = CASE WHEN revoked_at = 0 THEN $1 ELSE revoked_at END WHERE id = $2`, at.UnixNano(), id)
	if err != nil {
		return fmt.Errorf("revoke approval rule: %w", err)
	}
	if res.RowsAffected() == 0 {
		return cmpNotFound(nil, "approval rule %d does not exist: `hubctl inbox rules` lists them", id)
	}
	return nil
}

// cmpNotFound returns err, or ENOTFOUND with the text when err is nil.
func cmpNotFound(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return hub.Errorf(hub.ENOTFOUND, format, args...)
}

// InsertPerson implements hub.PersonTx.
func (t *Tx) InsertPerson(p *hub.Person, tokenHash []byte) error {
	err := t.queryRow(`INSERT INTO people (name, token_hash, created_at, revoked_at, projects) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		p.Name, tokenHash, row.Nanos(p.CreatedAt), row.Nanos(p.RevokedAt), strings.Join(p.Projects, ",")).Scan(&p.ID)
	if err != nil {
		return fmt.Errorf("insert person: %w", mapErr(err))
	}
	return nil
}

func (t *Tx) personWhere(where string, arg any) (*hub.Person, error) {
	p, err := row.Person(t.queryRow(`SELECT `+row.PersonColumns+` FROM people WHERE `+where, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.NoPerson()
	}
	return p, err
}

// PersonByName implements hub.PersonTx.
func (t *Tx) PersonByName(name string) (*hub.Person, error) { return t.personWhere(`name = $1`, name) }

// PersonByTokenHash implements hub.PersonTx.
func (t *Tx) PersonByTokenHash(hash []byte) (*hub.Person, error) {
	return t.personWhere(`token_hash = $1`, hash)
}

// ActivePerson implements hub.PersonTx.
func (t *Tx) ActivePerson(name string) (bool, error) {
	var ok bool
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM people WHERE name = $1 AND revoked_at = 0)`, name).Scan(&ok)
	return ok, err
}

// ListPeople implements hub.PersonTx.
func (t *Tx) ListPeople() ([]*hub.Person, error) {
	return scanAll(t, row.Person, `SELECT `+row.PersonColumns+` FROM people ORDER BY name`)
}

// RevokePerson implements hub.PersonTx.
func (t *Tx) RevokePerson(name string, at time.Time) error {
	res, err := t.exec(`UPDATE people SET token_hash = NULL, revoked_at = CASE WHEN revoked_at = 0 THEN $1 ELSE revoked_at END WHERE name = $2`, at.UnixNano(), name)
	if err != nil {
		return fmt.Errorf("revoke person: %w", err)
	}
	if res.RowsAffected() == 0 {
		return cmpNotFound(nil, "no person named %q: `hubctl people list` shows them", name)
	}
	return nil
}

// InsertWebhook implements hub.WebhookTx.
func (t *Tx) InsertWebhook(w *hub.Webhook) error {
	err := t.queryRow(`INSERT INTO webhooks (url, kinds, projects, secret, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		w.URL, row.Kinds(w), strings.Join(w.Projects, ","), w.Secret, row.Nanos(w.CreatedAt)).Scan(&w.ID)
	if err != nil {
		return fmt.Errorf("insert webhook: %w", mapErr(err))
	}
	return nil
}

// ListWebhooks implements hub.WebhookTx.
func (t *Tx) ListWebhooks() ([]*hub.Webhook, error) {
	return scanAll(t, row.Webhook, `SELECT `+row.WebhookColumns+` FROM webhooks ORDER BY id`)
}

// DeleteWebhook implements hub.WebhookTx.
func (t *Tx) DeleteWebhook(id int64) error {
	res, err := t.exec(`DELETE FROM webhooks WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	if res.RowsAffected() == 0 {
		return cmpNotFound(nil, "webhook %d does not exist: `hubctl webhooks list` shows them", id)
	}
	return nil
}

// InsertWebhookDelivery implements hub.WebhookTx.
func (t *Tx) InsertWebhookDelivery(d *hub.WebhookDelivery, keep int) error {
	err := t.queryRow(`INSERT INTO webhook_deliveries (webhook_id, item_id, status, attempts, code, error, created_at, done_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		d.WebhookID, d.ItemID, d.Status, d.Attempts, d.Code, d.Error, row.Nanos(d.CreatedAt), row.Nanos(d.DoneAt)).Scan(&d.ID)
	if err != nil {
		return fmt.Errorf("log webhook delivery: %w", mapErr(err))
	}
	_, err = t.exec(`DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND id NOT IN
		(SELECT id FROM webhook_deliveries WHERE webhook_id = $2 ORDER BY id DESC LIMIT $3)`, d.WebhookID, d.WebhookID, keep)
	return err
}

// ListWebhookDeliveries implements hub.WebhookTx.
func (t *Tx) ListWebhookDeliveries(webhookID int64, limit int) ([]*hub.WebhookDelivery, error) {
	if webhookID == 0 {
		return scanAll(t, row.WebhookDelivery, `SELECT `+row.WebhookDeliveryColumns+` FROM webhook_deliveries ORDER BY id DESC LIMIT $1`, limit)
	}
	return scanAll(t, row.WebhookDelivery, `SELECT `+row.WebhookDeliveryColumns+` FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2`, webhookID, limit)
}
