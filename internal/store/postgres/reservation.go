package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.ReservationTx.

const reservationFrom = ` FROM reservations r JOIN agents a ON a.id = r.agent_id`

// ActiveReservations implements hub.ReservationTx.
func (t *Tx) ActiveReservations(now time.Time, agentID int64) ([]*hub.Reservation, error) {
	rows, err := t.query(`SELECT `+row.ReservationColumnsA+reservationFrom+`
		WHERE r.expires_at > $1 AND ($2::bigint = 0 OR r.agent_id = $2)
		ORDER BY r.pattern COLLATE "C", r.id`, now.UnixNano(), agentID)
	out, err := scanRows(rows, err, func(r pgx.Rows) (*hub.Reservation, error) { return row.Reservation(r) })
	if err != nil {
		return nil, fmt.Errorf("list reservations: %w", err)
	}
	return out, nil
}

// RecheckReservations implements hub.ReservationTx. Reservations are
// written under the exclusive write lock, one transaction at a time, so
// IDs (taken from the identity inside those transactions) grow in commit
// order.
func (t *Tx) RecheckReservations(now time.Time, agentID int64, ids []int64, afterID int64) ([]*hub.Reservation, error) {
	if ids == nil {
		ids = []int64{}
	}
	rows, err := t.query(`SELECT `+row.ReservationColumnsA+reservationFrom+`
		WHERE r.expires_at > $1 AND (r.agent_id = $2 OR r.id > $3 OR r.id = ANY($4::bigint[]))
		ORDER BY r.pattern COLLATE "C", r.id`, now.UnixNano(), agentID, afterID, ids)
	out, err := scanRows(rows, err, func(r pgx.Rows) (*hub.Reservation, error) { return row.Reservation(r) })
	if err != nil {
		return nil, fmt.Errorf("recheck reservations: %w", err)
	}
	return out, nil
}

// MaxReservationID implements hub.ReservationTx.
func (t *Tx) MaxReservationID() (int64, error) {
	var id int64
	if err := t.queryRow(`SELECT COALESCE(MAX(id), 0) FROM reservations`).Scan(&id); err != nil {
		return 0, fmt.Errorf("max reservation ID: %w", err)
	}
	return id, nil
}

// ReservationByID implements hub.ReservationTx.
func (t *Tx) ReservationByID(id int64) (*hub.Reservation, error) {
	r, err := row.Reservation(t.queryRow(`SELECT `+row.ReservationColumnsA+reservationFrom+` WHERE r.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.NoReservation(id)
	}
	return r, err
}

// InsertReservations implements hub.ReservationTx. An expired
// reservation of the same agent and pattern, not yet deleted by the
// orchestrator, is deleted first, so that the new one has a new ID.
func (t *Tx) InsertReservations(rs []*hub.Reservation) error {
	for _, r := range rs {
		if _, err := t.exec(`DELETE FROM reservations WHERE agent_id = $1 AND pattern = $2`, r.AgentID, r.Pattern); err != nil {
			return fmt.Errorf("insert reservation: %w", err)
		}
		err := t.queryRow(`INSERT INTO reservations (agent_id, pattern, mode, reason, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
			RETURNING id`,
			r.AgentID, r.Pattern, string(r.Mode), r.Reason, row.Nanos(r.CreatedAt), row.Nanos(r.ExpiresAt)).Scan(&r.ID)
		if err != nil {
			return fmt.Errorf("insert reservation: %w", err)
		}
	}
	return nil
}

// UpdateReservation implements hub.ReservationTx.
func (t *Tx) UpdateReservation(r *hub.Reservation) error {
	tag, err := t.exec(`UPDATE reservations SET mode = $1, reason = $2, expires_at = $3 WHERE id = $4`,
		string(r.Mode), r.Reason, row.Nanos(r.ExpiresAt), r.ID)
	if err != nil {
		return fmt.Errorf("update reservation: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return hub.NoReservation(r.ID)
	}
	return nil
}

// DeleteReservations implements hub.ReservationTx.
func (t *Tx) DeleteReservations(ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := t.exec(`DELETE FROM reservations WHERE id = ANY($1::bigint[])`, ids)
	if err != nil {
		return 0, fmt.Errorf("delete reservations: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// DeleteExpiredReservations implements hub.ReservationTx.
func (t *Tx) DeleteExpiredReservations(now time.Time, limit int) (int, error) {
	tag, err := t.exec(`DELETE FROM reservations WHERE id IN (
		SELECT id FROM reservations WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`, now.UnixNano(), limit)
	if err != nil {
		return 0, fmt.Errorf("delete expired reservations: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// ReservationHolders implements hub.ReservationTx.
func (t *Tx) ReservationHolders(now time.Time) ([]int64, error) {
	return queryColumn[int64](t, `SELECT DISTINCT agent_id FROM reservations WHERE expires_at > $1 ORDER BY agent_id`, now.UnixNano())
}
