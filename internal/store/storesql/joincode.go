package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.JoinCodeTx.

const joinCodeFrom = `SELECT ` + row.JoinCodeColumns + ` FROM join_codes `

// InsertJoinCode implements hub.JoinCodeTx. A taken hash is reported
// without aborting the transaction.
func (x Statements) InsertJoinCode(c *hub.JoinCode, hash []byte) error {
	err := x.DB.QueryRow(`INSERT INTO join_codes (code_hash, role, note, max_uses, uses, created_at, expires_at, revoked_at, project)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
		hash, c.Role, c.Note, c.MaxUses, c.Uses, row.Nanos(c.CreatedAt), row.Nanos(c.ExpiresAt), row.Nanos(c.RevokedAt), hub.ProjectOr(c.Project)).Scan(&c.ID)
	if x.DB.IsNoRows(err) {
		return hub.JoinCodeTaken()
	} else if err != nil {
		return fmt.Errorf("insert join code: %w", err)
	}
	return nil
}

// JoinCodeByHash implements hub.JoinCodeTx.
func (x Statements) JoinCodeByHash(hash []byte) (*hub.JoinCode, error) {
	c, err := row.JoinCode(x.DB.QueryRow(joinCodeFrom+`WHERE code_hash = ?`, hash))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoJoinCodeFor()
	}
	return c, err
}

// JoinCodeByID implements hub.JoinCodeTx.
func (x Statements) JoinCodeByID(id int64) (*hub.JoinCode, error) {
	c, err := row.JoinCode(x.DB.QueryRow(joinCodeFrom+`WHERE id = ?`, id))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoJoinCode(id)
	}
	return c, err
}

// JoinCodes implements hub.JoinCodeTx.
func (x Statements) JoinCodes() ([]*hub.JoinCode, error) {
	cs, err := all(x.DB, row.JoinCode, joinCodeFrom+`ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list join codes: %w", err)
	}
	return cs, nil
}

// UseJoinCode implements hub.JoinCodeTx.
func (x Statements) UseJoinCode(id int64, now time.Time) (bool, error) {
	n, err := x.DB.Exec(`UPDATE join_codes SET uses = uses + 1
		WHERE id = ? AND revoked_at = 0 AND expires_at > ? AND uses < max_uses`, id, now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("use join code: %w", err)
	}
	return n == 1, nil
}

// RevokeJoinCode implements hub.JoinCodeTx.
func (x Statements) RevokeJoinCode(id int64, at time.Time) error {
	if _, err := x.DB.Exec(`UPDATE join_codes SET revoked_at = ? WHERE id = ? AND revoked_at = 0`, at.UnixNano(), id); err != nil {
		return fmt.Errorf("revoke join code: %w", err)
	}
	_, err := x.JoinCodeByID(id)
	return err
}
