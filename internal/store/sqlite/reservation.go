package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// ActiveReservations implements hub.ReservationTx.
func (t *Tx) ActiveReservations(now time.Time, agentID int64) ([]*hub.Reservation, error) {
	q := `SELECT ` + row.ReservationColumnsA + ` FROM reservations r JOIN agents a ON a.id = r.agent_id WHERE r.expires_at > ?`
	args := []any{now.UnixNano()}
	if agentID != 0 {
		q, args = q+` AND r.agent_id = ?`, append(args, agentID)
	}
	rows, err := t.query(q+` ORDER BY r.pattern, r.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list reservations: %w", err)
	}
	defer rows.Close()
	var out []*hub.Reservation
	for rows.Next() {
		r, err := row.Reservation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RecheckReservations implements hub.ReservationTx: three lookups by key
// (the agent's index, the rowid above afterID, the rowids listed), so the
// writer reads only those rows. SQLite commits one writer at a time and
// AUTOINCREMENT never reuses an ID, so IDs grow in commit order.
func (t *Tx) RecheckReservations(now time.Time, agentID int64, ids []int64, afterID int64) ([]*hub.Reservation, error) {
	rows, err := t.query(`SELECT `+row.ReservationColumnsA+` FROM reservations r JOIN agents a ON a.id = r.agent_id
		WHERE r.expires_at > ? AND r.id IN (
			SELECT id FROM reservations WHERE agent_id = ?
			UNION SELECT id FROM reservations WHERE id > ?
			UNION SELECT value FROM json_each(?))
		ORDER BY r.pattern, r.id`, now.UnixNano(), agentID, afterID, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("recheck reservations: %w", err)
	}
	defer rows.Close()
	var out []*hub.Reservation
	for rows.Next() {
		r, err := row.Reservation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
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
	r, err := row.Reservation(t.queryRow(`SELECT `+row.ReservationColumnsA+` FROM reservations r JOIN agents a ON a.id = r.agent_id WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hub.NoReservation(id)
	}
	return r, err
}

// InsertReservations implements hub.ReservationTx. An expired
// reservation of the same agent and pattern, not yet deleted by the
// orchestrator, is deleted first, so that the new one has a new ID.
func (t *Tx) InsertReservations(rs []*hub.Reservation) error {
	for _, r := range rs {
		if _, err := t.exec(`DELETE FROM reservations WHERE agent_id = ? AND pattern = ?`, r.AgentID, r.Pattern); err != nil {
			return fmt.Errorf("insert reservation: %w", err)
		}
		err := t.queryRow(`INSERT INTO reservations (agent_id, pattern, mode, reason, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
			RETURNING id`,
			r.AgentID, r.Pattern, string(r.Mode), r.Reason, row.Nanos(r.CreatedAt), row.Nanos(r.ExpiresAt)).Scan(&r.ID)
		if err != nil {
			return fmt.Errorf("insert reservation: %w", mapErr(err))
		}
	}
	return nil
}

// UpdateReservation implements hub.ReservationTx.
func (t *Tx) UpdateReservation(r *hub.Reservation) error {
	res, err := t.exec(`UPDATE reservations SET mode = ?, reason = ?, expires_at = ? WHERE id = ?`,
		string(r.Mode), r.Reason, row.Nanos(r.ExpiresAt), r.ID)
	if err != nil {
		return fmt.Errorf("update reservation: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return hub.NoReservation(r.ID)
	}
	return nil
}

// DeleteReservations implements hub.ReservationTx.
func (t *Tx) DeleteReservations(ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	res, err := t.exec(`DELETE FROM reservations WHERE id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`, args...)
	if err != nil {
		return 0, fmt.Errorf("delete reservations: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// DeleteExpiredReservations implements hub.ReservationTx.
func (t *Tx) DeleteExpiredReservations(now time.Time, limit int) (int, error) {
	res, err := t.exec(`DELETE FROM reservations WHERE id IN (
		SELECT id FROM reservations WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`, now.UnixNano(), limit)
	if err != nil {
		return 0, fmt.Errorf("delete expired reservations: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ReservationHolders implements hub.ReservationTx.
func (t *Tx) ReservationHolders(now time.Time) ([]int64, error) {
	return queryColumn[int64](t, `SELECT DISTINCT agent_id FROM reservations WHERE expires_at > ? ORDER BY agent_id`, now.UnixNano())
}
