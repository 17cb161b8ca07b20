package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.ReservationTx.

const reservationFrom = `SELECT ` + row.ReservationColumnsA + ` FROM reservations r JOIN agents a ON a.id = r.agent_id `

// ActiveReservations implements hub.ReservationTx.
func (x Statements) ActiveReservations(now time.Time, agentID int64) ([]*hub.Reservation, error) {
	q, args := reservationFrom+`WHERE r.expires_at > ?`, []any{now.UnixNano()}
	if agentID != 0 {
		q, args = q+` AND r.agent_id = ?`, append(args, agentID)
	}
	out, err := all(x.DB, row.Reservation, q+` ORDER BY r.pattern`+x.Dialect.Bytewise+`, r.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list reservations: %w", err)
	}
	return out, nil
}

// RecheckReservations implements hub.ReservationTx: three lookups by key
// (the agent's index, the IDs above afterID, the IDs listed), so the
// writer reads only those rows. Reservations are written one transaction
// at a time (SQLite's one writer, PostgreSQL's exclusive write lock) and
// an ID is never used again, so IDs grow in commit order.
func (x Statements) RecheckReservations(now time.Time, agentID int64, ids []int64, afterID int64) ([]*hub.Reservation, error) {
	out, err := all(x.DB, row.Reservation, reservationFrom+`
		WHERE r.expires_at > ? AND r.id IN (
			SELECT id FROM reservations WHERE agent_id = ?
			UNION SELECT id FROM reservations WHERE id > ?
			UNION `+x.Dialect.IDRows+`)
		ORDER BY r.pattern`+x.Dialect.Bytewise+`, r.id`, now.UnixNano(), agentID, afterID, x.Dialect.IDs(ids))
	if err != nil {
		return nil, fmt.Errorf("recheck reservations: %w", err)
	}
	return out, nil
}

// MaxReservationID implements hub.ReservationTx.
func (x Statements) MaxReservationID() (int64, error) {
	var id int64
	if err := x.DB.QueryRow(`SELECT COALESCE(MAX(id), 0) FROM reservations`).Scan(&id); err != nil {
		return 0, fmt.Errorf("max reservation ID: %w", err)
	}
	return id, nil
}

// ReservationByID implements hub.ReservationTx.
func (x Statements) ReservationByID(id int64) (*hub.Reservation, error) {
	r, err := row.Reservation(x.DB.QueryRow(reservationFrom+`WHERE r.id = ?`, id))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoReservation(id)
	}
	return r, err
}

// InsertReservations implements hub.ReservationTx. An expired
// reservation of the same agent and pattern, not yet deleted by the
// orchestrator, is deleted first, so that the new one has a new ID.
func (x Statements) InsertReservations(rs []*hub.Reservation) error {
	for _, r := range rs {
		if _, err := x.DB.Exec(`DELETE FROM reservations WHERE agent_id = ? AND pattern = ?`, r.AgentID, r.Pattern); err != nil {
			return fmt.Errorf("insert reservation: %w", err)
		}
		err := x.DB.QueryRow(`INSERT INTO reservations (agent_id, pattern, mode, reason, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
			RETURNING id`,
			r.AgentID, r.Pattern, string(r.Mode), r.Reason, row.Nanos(r.CreatedAt), row.Nanos(r.ExpiresAt)).Scan(&r.ID)
		if err != nil {
			return fmt.Errorf("insert reservation: %w", err)
		}
	}
	return nil
}

// UpdateReservation implements hub.ReservationTx.
func (x Statements) UpdateReservation(r *hub.Reservation) error {
	n, err := x.DB.Exec(`UPDATE reservations SET mode = ?, reason = ?, expires_at = ? WHERE id = ?`,
		string(r.Mode), r.Reason, row.Nanos(r.ExpiresAt), r.ID)
	if err != nil {
		return fmt.Errorf("update reservation: %w", err)
	}
	if n == 0 {
		return hub.NoReservation(r.ID)
	}
	return nil
}

// DeleteReservations implements hub.ReservationTx.
func (x Statements) DeleteReservations(ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := x.DB.Exec(`DELETE FROM reservations WHERE `+x.Dialect.InIDs("id"), x.Dialect.IDs(ids))
	if err != nil {
		return 0, fmt.Errorf("delete reservations: %w", err)
	}
	return int(n), nil
}

// DeleteExpiredReservations implements hub.ReservationTx.
func (x Statements) DeleteExpiredReservations(now time.Time, limit int) (int, error) {
	n, err := x.DB.Exec(`DELETE FROM reservations WHERE id IN (
		SELECT id FROM reservations WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`, now.UnixNano(), limit)
	if err != nil {
		return 0, fmt.Errorf("delete expired reservations: %w", err)
	}
	return int(n), nil
}

// ExpiredReservations implements hub.ReservationTx.
func (x Statements) ExpiredReservations(now time.Time, limit int) ([]int64, error) {
	ids, err := column[int64](x.DB, `SELECT id FROM reservations WHERE expires_at <= ? ORDER BY expires_at LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("expired reservations: %w", err)
	}
	return ids, nil
}

// ReservationHolders implements hub.ReservationTx.
func (x Statements) ReservationHolders(now time.Time) ([]int64, error) {
	return column[int64](x.DB, `SELECT DISTINCT agent_id FROM reservations WHERE expires_at > ? ORDER BY agent_id`, now.UnixNano())
}
