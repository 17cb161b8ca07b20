package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.JoinCodeTx.

func (t *Tx) joinCodeWhere(where string, arg any) (*hub.JoinCode, error) {
	c, err := row.JoinCode(t.queryRow(`SELECT `+row.JoinCodeColumns+` FROM join_codes WHERE `+where, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.NoJoinCodeFor()
	}
	return c, err
}

// InsertJoinCode implements hub.JoinCodeTx.
func (t *Tx) InsertJoinCode(c *hub.JoinCode, hash []byte) error {
	err := t.queryRow(`INSERT INTO join_codes (code_hash, role, note, max_uses, uses, created_at, expires_at, revoked_at, project)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		hash, c.Role, c.Note, c.MaxUses, c.Uses, row.Nanos(c.CreatedAt), row.Nanos(c.ExpiresAt), row.Nanos(c.RevokedAt), hub.ProjectOr(c.Project)).Scan(&c.ID)
	if err != nil {
		return fmt.Errorf("insert join code: %w", mapErr(err))
	}
	return nil
}

// JoinCodeByHash implements hub.JoinCodeTx.
func (t *Tx) JoinCodeByHash(hash []byte) (*hub.JoinCode, error) {
	return t.joinCodeWhere(`code_hash = $1`, hash)
}

// JoinCodeByID implements hub.JoinCodeTx.
func (t *Tx) JoinCodeByID(id int64) (*hub.JoinCode, error) {
	c, err := t.joinCodeWhere(`id = $1`, id)
	if hub.ErrorCode(err) == hub.ENOTFOUND {
		return nil, hub.NoJoinCode(id)
	}
	return c, err
}

// ListJoinCodes implements hub.JoinCodeTx.
func (t *Tx) ListJoinCodes() ([]*hub.JoinCode, error) {
	rows, err := t.query(`SELECT ` + row.JoinCodeColumns + ` FROM join_codes ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list join codes: %w", err)
	}
	return scanRows(rows, nil, func(r pgx.Rows) (*hub.JoinCode, error) { return row.JoinCode(r) })
}

// UseJoinCode implements hub.JoinCodeTx.
func (t *Tx) UseJoinCode(id int64, now time.Time) (bool, error) {
	res, err := t.exec(`UPDATE join_codes SET uses = uses + 1
		WHERE id = $1 AND revoked_at = 0 AND expires_at > $2 AND uses < max_uses`, id, now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("use join code: %w", err)
	}
	return res.RowsAffected() == 1, nil
}

// RevokeJoinCode implements hub.JoinCodeTx.
func (t *Tx) RevokeJoinCode(id int64, at time.Time) error {
	if _, err := t.exec(`UPDATE join_codes SET revoked_at = $1 WHERE id = $2 AND revoked_at = 0`, at.UnixNano(), id); err != nil {
		return fmt.Errorf("revoke join code: %w", err)
	}
	_, err := t.JoinCodeByID(id)
	return err
}
