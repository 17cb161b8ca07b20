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

// ReservationByID implements hub.ReservationTx.
func (t *Tx) ReservationByID(id int64) (*hub.Reservation, error) {
	r, err := row.Reservation(t.queryRow(`SELECT `+row.ReservationColumnsA+reservationFrom+` WHERE r.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.Errorf(hub.ENOTFOUND, "reservation %d does not exist (released or expired): list the reservations to see their IDs", id)
	}
	return r, err
}

// InsertReservations implements hub.ReservationTx. An expired reservation
// of the same agent and pattern, not yet deleted by the orchestrator, is
// replaced.
func (t *Tx) InsertReservations(rs []*hub.Reservation) error {
	for _, r := range rs {
		err := t.queryRow(`INSERT INTO reservations (agent_id, pattern, mode, reason, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (agent_id, pattern) DO UPDATE SET mode = excluded.mode, reason = excluded.reason,
				created_at = excluded.created_at, expires_at = excluded.expires_at
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
		return hub.Errorf(hub.ENOTFOUND, "reservation %d does not exist (released or expired)", r.ID)
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
