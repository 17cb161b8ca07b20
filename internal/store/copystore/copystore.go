// Package copystore copies a hub's SQLite store into an empty PostgreSQL
// database (`hub copy-store`), for a hub that moves from one machine to
// several replicas.
//
// Both stores are first opened through their own packages, which migrate
// them to the newest schema (each store numbers its migrations on its own,
// so what must match is the tables and their columns, checked before
// anything is written); then every table is copied row by row, IDs
// included, in one PostgreSQL transaction, and the PostgreSQL ID counters
// (identity sequences and the message ID counter) are moved past the
// highest ID SQLite ever handed out. Every table of both schemas must be
// known here: a table or column this package does not know stops the copy
// before anything is written, so a new migration cannot be left behind
// silently.
package copystore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/store/postgres"
	"github.com/agenthub/hub/internal/store/sqlite"
	"github.com/jackc/pgx/v5"
)

// conv says how a SQLite value becomes a PostgreSQL one.
type conv int

const (
	asIs     conv = iota // integers, text, blobs, NULL
	boolean              // 0/1 → BOOLEAN
	nameList             // comma-separated names → TEXT[]
	jsonList             // JSON array of strings → TEXT[]
)

// table is one table of the schema, in an order that respects foreign
// keys. convs names the columns that are not copied as they are;
// generated, the PostgreSQL columns that PostgreSQL computes from the
// others as the rows go in (so they are not copied, and exist only there).
type table struct {
	name      string
	convs     map[string]conv
	generated []string
	// seeded: the migrations put rows in it (projects: 'default'); the
	// copy replaces them rather than finding the target not empty.
	seeded bool
}

// tables is every table of the hub's schema (both stores), parents first.
// The stores' bookkeeping tables (schema_migrations, SQLite's
// sqlite_sequence, PostgreSQL's message_ids counter) are handled apart.
var tables = []table{
	{name: "projects", seeded: true},
	{name: "project_links"},
	{name: "agents"},
	{name: "channels"},
	{name: "channel_members"},
	{name: "messages", convs: map[string]conv{"recipients": nameList, "mentions": nameList, "ack_required": boolean, "queue_checked": boolean}, generated: []string{"search"}},
	{name: "deliveries", convs: map[string]conv{"mention": boolean, "ack_required": boolean}},
	{name: "meta"},
	{name: "activity_logs", convs: map[string]conv{"content": jsonList, "tags": jsonList}},
	{name: "checkpoints"},
	{name: "deep_work"},
	{name: "liveness", convs: map[string]conv{"reflection_due": boolean, "health_kinds": nameList}},
	{name: "events"},
	{name: "agent_checks"},
	{name: "pulses", convs: map[string]conv{"enabled": boolean, "unanswered": boolean}},
	{name: "cron_jobs", convs: map[string]conv{"enabled": boolean}},
	{name: "cron_runs", convs: map[string]conv{"manual": boolean}},
	{name: "reservations"},
	{name: "join_codes"},
	{name: "pulses_sent"},
	{name: "injections"},
	{name: "read_marks"},
	{name: "tasks"},
	{name: "task_deps"},
	{name: "task_watchers"},
	{name: "task_leases"},
	{name: "people"},
	{name: "inbox_items"},
	{name: "approval_rules"},
	{name: "webhooks"},
	{name: "webhook_deliveries"},
	{name: "agent_paths"},
	{name: "usage_minutes"},
	{name: "usage_days"},
	{name: "budgets"},
}

// bookkeeping are the stores' own tables, not copied as rows: their
// migration records, SQLite's AUTOINCREMENT counters and PostgreSQL's
// message ID counter (both moved past the copied IDs instead), and the
// unread counters (inbox_counts), which each store's triggers derive from
// deliveries and read cursors: on PostgreSQL they fill the counters as the
// agents, then the deliveries, are copied in.
var bookkeeping = []string{"schema_migrations", "sqlite_sequence", "message_ids", "inbox_counts"}

// indexes are SQLite's full-text index of the messages (0010_search.sql,
// 0014_search_readers.sql), its shadow tables and its tokenizer: not
// copied, PostgreSQL computes its own (the messages' generated search
// column).
var indexes = []string{"messages_fts", "messages_fts_segdir", "messages_fts_segments", "messages_fts_stat", "messages_tokens"}

// DatabaseFile is the SQLite file in a hub's data dir.
func DatabaseFile(dataDir string) string { return filepath.Join(dataDir, "hub.db") }

// Copy copies the hub in dataDir (SQLite) into the PostgreSQL database at
// url, which must hold no hub data yet, and reports its progress, table by
// table, to progress. It refuses a data dir whose hub is running, a
// missing SQLite file and a non-empty target, writing nothing.
func Copy(ctx context.Context, dataDir, url string, progress io.Writer) error {
	path := DatabaseFile(dataDir)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("copy-store: no hub database in %s (%v): --from names the data dir of a SQLite hub", dataDir, err)
	}
	// The hub's own data dir lock: no copy of a database a hub is writing,
	// and no hub starting on it meanwhile.
	lock, _, err := datadir.Lock(dataDir)
	if err != nil {
		return fmt.Errorf("copy-store: %w", err)
	}
	defer lock.Close()

	// Open both stores once through their own code, which migrates them.
	src, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return fmt.Errorf("copy-store: %w", err)
	}
	if err := src.Close(); err != nil {
		return fmt.Errorf("copy-store: close %s: %w", path, err)
	}
	dst, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		return fmt.Errorf("copy-store: %w", err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("copy-store: close the target: %w", err)
	}

	from, err := sql.Open("sqlite3", "file:"+uriPath(path)+"?mode=ro&_query_only=1&_busy_timeout=5000")
	if err != nil {
		return fmt.Errorf("copy-store: open %s: %w", path, err)
	}
	defer from.Close()
	from.SetMaxOpenConns(1)
	rtx, err := from.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("copy-store: read %s: %w", path, err)
	}
	defer rtx.Rollback() //nolint:errcheck // read-only

	to, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("copy-store: connect to the target: %w", err)
	}
	defer to.Close(context.Background())
	wtx, err := to.Begin(ctx)
	if err != nil {
		return fmt.Errorf("copy-store: begin on the target: %w", err)
	}
	defer wtx.Rollback(context.Background()) //nolint:errcheck // after Commit a no-op

	c := &copier{src: rtx, dst: wtx, progress: progress}
	if err := c.run(ctx); err != nil {
		return fmt.Errorf("copy-store: %w", err)
	}
	if err := wtx.Commit(ctx); err != nil {
		return fmt.Errorf("copy-store: commit on the target: %w", err)
	}
	fmt.Fprintf(progress, "copy-store: done, %d rows in %d tables\n", c.total, len(tables))
	return nil
}

// copier copies inside one read transaction on SQLite and one write
// transaction on PostgreSQL.
type copier struct {
	src      *sql.Tx
	dst      pgx.Tx
	progress io.Writer
	total    int64
}

func (c *copier) run(ctx context.Context) error {
	// Nobody writes the target while it is checked and filled.
	if _, err := c.dst.Exec(ctx, `LOCK TABLE `+strings.Join(tableNames(), ", ")+`, message_ids IN EXCLUSIVE MODE`); err != nil {
		return fmt.Errorf("lock the target's tables: %w", err)
	}
	if err := c.checkTables(ctx); err != nil {
		return err
	}
	if err := c.checkEmpty(ctx); err != nil {
		return err
	}
	for _, t := range tables {
		cols, err := c.columns(ctx, t)
		if err != nil {
			return err
		}
		n, err := c.copyTable(ctx, t, cols)
		if err != nil {
			return fmt.Errorf("copy %s: %w", t.name, err)
		}
		c.total += n
		fmt.Fprintf(c.progress, "copy-store: %-16s %8d rows\n", t.name, n)
	}
	return c.advanceCounters(ctx)
}

// checkTables refuses schemas with a table this package does not know.
func (c *copier) checkTables(ctx context.Context) error {
	known := slices.Concat(bookkeeping, indexes, tableNames())
	srcTables, err := sqliteColumn(ctx, c.src, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return fmt.Errorf("list the SQLite tables: %w", err)
	}
	rows, _ := c.dst.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`)
	dstTables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list the PostgreSQL tables: %w", err)
	}
	for _, side := range []struct {
		store string
		names []string
	}{{"SQLite", srcTables}, {"PostgreSQL", dstTables}} {
		for _, n := range side.names {
			if !slices.Contains(known, n) {
				return fmt.Errorf("the %s store has a table %q that copy-store does not know: this binary cannot copy it", side.store, n)
			}
		}
	}
	for _, n := range tableNames() {
		if !slices.Contains(srcTables, n) || !slices.Contains(dstTables, n) {
			return fmt.Errorf("table %q is missing in one of the stores (SQLite %v, PostgreSQL %v)", n, srcTables, dstTables)
		}
	}
	return nil
}

// checkEmpty refuses a target that holds any hub data.
func (c *copier) checkEmpty(ctx context.Context) error {
	var full []string
	for _, t := range tables {
		if t.seeded {
			continue
		}
		var some bool
		if err := c.dst.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+pgx.Identifier{t.name}.Sanitize()+`)`).Scan(&some); err != nil {
			return fmt.Errorf("look into the target's %s: %w", t.name, err)
		}
		if some {
			full = append(full, t.name)
		}
	}
	var lastID int64
	if err := c.dst.QueryRow(ctx, `SELECT last_id FROM message_ids`).Scan(&lastID); err != nil {
		return fmt.Errorf("read the target's message ID counter: %w", err)
	}
	if lastID != 0 {
		full = append(full, "message_ids")
	}
	if len(full) > 0 {
		return fmt.Errorf("the target database is not empty (rows in %s): copy-store only fills an empty database; give it a new database or schema", strings.Join(full, ", "))
	}
	return nil
}

// columns returns a table's columns, which must be the same in both stores
// but for PostgreSQL's generated ones.
func (c *copier) columns(ctx context.Context, t table) ([]string, error) {
	name := t.name
	srcCols, err := sqliteColumn(ctx, c.src, `SELECT name FROM pragma_table_info(?) ORDER BY name`, name)
	if err != nil {
		return nil, fmt.Errorf("columns of SQLite's %s: %w", name, err)
	}
	rows, _ := c.dst.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY 1`, name)
	dstCols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("columns of PostgreSQL's %s: %w", name, err)
	}
	dstCols = slices.DeleteFunc(dstCols, func(col string) bool { return slices.Contains(t.generated, col) })
	if !slices.Equal(srcCols, dstCols) {
		return nil, fmt.Errorf("table %s has columns %v in SQLite but %v in PostgreSQL: this binary cannot copy it", name, srcCols, dstCols)
	}
	return srcCols, nil
}

// copyTable streams one table's rows into PostgreSQL (COPY).
func (c *copier) copyTable(ctx context.Context, t table, cols []string) (int64, error) {
	quoted := make([]string, len(cols))
	for i, col := range cols {
		quoted[i] = `"` + col + `"`
	}
	rows, err := c.src.QueryContext(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM "`+t.name+`"`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	if t.seeded {
		if _, err := c.dst.Exec(ctx, `DELETE FROM `+pgx.Identifier{t.name}.Sanitize()); err != nil {
			return 0, err
		}
	}
	src := &rowSource{rows: rows, t: t, cols: cols, vals: make([]any, len(cols))}
	n, err := c.dst.CopyFrom(ctx, pgx.Identifier{t.name}, cols, src)
	if err != nil {
		return n, err
	}
	return n, rows.Err()
}

// advanceCounters moves every PostgreSQL ID counter past the highest ID
// SQLite handed out (sqlite_sequence remembers deleted ones too), so that
// no ID is ever given twice.
func (c *copier) advanceCounters(ctx context.Context) error {
	rows, _ := c.dst.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY 1`)
	type identity struct{ table, column string }
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (identity, error) {
		var i identity
		return i, r.Scan(&i.table, &i.column)
	})
	if err != nil {
		return fmt.Errorf("list the identity columns: %w", err)
	}
	for _, id := range ids {
		high, err := c.highestID(ctx, id.table, id.column)
		if err != nil {
			return err
		}
		if high == 0 {
			continue
		}
		if _, err := c.dst.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), $3, true)`,
			pgx.Identifier{id.table}.Sanitize(), id.column, high); err != nil {
			return fmt.Errorf("advance the IDs of %s: %w", id.table, err)
		}
	}
	high, err := c.highestID(ctx, "messages", "id")
	if err != nil {
		return err
	}
	if _, err := c.dst.Exec(ctx, `UPDATE message_ids SET last_id = $1`, high); err != nil {
		return fmt.Errorf("advance the message ID counter: %w", err)
	}
	fmt.Fprintf(c.progress, "copy-store: ID counters advanced (next message ID %d)\n", high+1)
	return nil
}

// highestID is the highest ID SQLite has given in table: the largest in the
// table or in sqlite_sequence, whichever is higher.
func (c *copier) highestID(ctx context.Context, table, column string) (int64, error) {
	var inTable, inSeq int64
	if err := c.src.QueryRowContext(ctx, `SELECT COALESCE(MAX("`+column+`"), 0) FROM "`+table+`"`).Scan(&inTable); err != nil {
		return 0, fmt.Errorf("highest ID of %s: %w", table, err)
	}
	err := c.src.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = ?`, table).Scan(&inSeq)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("sqlite_sequence of %s: %w", table, err)
	}
	return max(inTable, inSeq), nil
}

// rowSource feeds SQLite rows to pgx's COPY, converting each value.
type rowSource struct {
	rows *sql.Rows
	t    table
	cols []string
	vals []any
	err  error
}

func (s *rowSource) Next() bool { return s.rows.Next() }
func (s *rowSource) Err() error { return s.err }

func (s *rowSource) Values() ([]any, error) {
	raw := make([]any, len(s.cols))
	ptrs := make([]any, len(s.cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := s.rows.Scan(ptrs...); err != nil {
		s.err = err
		return nil, err
	}
	for i, col := range s.cols {
		v, err := convert(raw[i], s.t.convs[col])
		if err != nil {
			s.err = fmt.Errorf("column %s: %w", col, err)
			return nil, s.err
		}
		s.vals[i] = v
	}
	return s.vals, nil
}

// convert turns one SQLite value into what PostgreSQL's column takes.
func convert(v any, how conv) (any, error) {
	if b, ok := v.([]byte); ok && how != asIs {
		v = string(b)
	}
	switch how {
	case boolean:
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("want 0 or 1, have %v", v)
		}
		return n != 0, nil
	case nameList:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want comma-separated names, have %v", v)
		}
		if s == "" {
			return []string{}, nil
		}
		return strings.Split(s, ","), nil
	case jsonList:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a JSON array, have %v", v)
		}
		xs := []string{}
		if s != "" {
			if err := json.Unmarshal([]byte(s), &xs); err != nil {
				return nil, fmt.Errorf("want a JSON array of strings: %w", err)
			}
		}
		return xs, nil
	}
	return v, nil
}

func tableNames() []string {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.name
	}
	return names
}

func sqliteColumn(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// uriPath escapes what SQLite's URI parser would misread in a file path.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
}
