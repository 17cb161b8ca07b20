// Package migration holds the store's one numbered list of migrations,
// for SQLite and PostgreSQL both: each number is one change of the schema,
// written once where the two dialects agree (NNNN_name.sql) or side by side
// where they differ (NNNN_name.sqlite.sql beside NNNN_name.postgres.sql).
// Each store applies them its own way (SQLite under its write lock,
// PostgreSQL under an advisory lock), recording the applied ones in
// schema_migrations.
package migration

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// Dialect names a store's SQL: the infix of its migration files.
type Dialect string

// The dialects.
const (
	SQLite     Dialect = "sqlite"
	PostgreSQL Dialect = "postgres"
)

var dialects = []Dialect{SQLite, PostgreSQL}

// Migration is one numbered change, in one dialect's text.
type Migration struct {
	Version int
	Name    string // NNNN_name.sql, recorded in schema_migrations
	SQL     string
}

//go:embed sql/*.sql
var files embed.FS

// List returns the migrations in dialect d, oldest first.
func List(d Dialect) ([]Migration, error) { return load(files, "sql", d) }

// load reads the migrations of directory dir of fsys in dialect d. It
// refuses a file not named NNNN_name.sql or NNNN_name.DIALECT.sql, two
// changes with one number, and a change written for some dialects but not
// all: every number is the same change in every store.
func load(fsys fs.FS, dir string, d Dialect) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	type change struct {
		name  string             // NNNN_name.sql
		texts map[Dialect]string // "" for the text of every dialect
	}
	changes := map[int]*change{}
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".sql")
		num, _, numbered := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || !numbered || err != nil {
			return nil, fmt.Errorf("migration file %q is not named NNNN_name.sql or NNNN_name.DIALECT.sql", e.Name())
		}
		var dialect Dialect
		if stem, ext, found := strings.Cut(base, "."); found {
			dialect = Dialect(ext)
			if !known(dialect) {
				return nil, fmt.Errorf("migration file %q names dialect %q, want one of %v", e.Name(), ext, dialects)
			}
			base = stem
		}
		c := changes[v]
		if c == nil {
			c = &change{name: base + ".sql", texts: map[Dialect]string{}}
			changes[v] = c
		}
		if c.name != base+".sql" {
			return nil, fmt.Errorf("migrations %q and %q share number %d", c.name, e.Name(), v)
		}
		if _, dup := c.texts[dialect]; dup {
			return nil, fmt.Errorf("migration %q is written twice", e.Name())
		}
		b, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		c.texts[dialect] = string(b)
	}
	var ms []Migration
	for v, c := range changes {
		text, common := c.texts[""]
		if common && len(c.texts) > 1 {
			return nil, fmt.Errorf("migration %s has a text for every dialect and one for some", c.name)
		}
		if !common {
			for _, each := range dialects {
				if _, ok := c.texts[each]; !ok {
					return nil, fmt.Errorf("migration %s has no text for %s: write its %s beside the others (a comment alone where it changes nothing there)",
						c.name, each, strings.TrimSuffix(c.name, ".sql")+"."+string(each)+".sql")
				}
			}
			text = c.texts[d]
		}
		ms = append(ms, Migration{Version: v, Name: c.name, SQL: text})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	if !known(d) {
		return nil, fmt.Errorf("no dialect %q, want one of %v", d, dialects)
	}
	return ms, nil
}

func known(d Dialect) bool {
	for _, each := range dialects {
		if d == each {
			return true
		}
	}
	return false
}

// Applied is a row of schema_migrations: a migration a database holds.
type Applied struct {
	Version int
	Name    string
}

// change is the name of a migration without its number: what it changes.
func change(name string) string {
	_, rest, _ := strings.Cut(name, "_")
	return rest
}

// The statements of schema_migrations both stores run ("?" placeholders):
// the applied migrations, oldest first; recording one; and renumbering
// them (Renumber), all made negative first so that no new number meets an
// old one.
const (
	ReadApplied = `SELECT version, name FROM schema_migrations ORDER BY version`
	Record      = `INSERT INTO schema_migrations (version, name) VALUES (?, ?)`
	Negate      = `UPDATE schema_migrations SET version = -version`
	Number      = `UPDATE schema_migrations SET version = ?, name = ? WHERE version = ?`
)

// Renumber maps a database's rows of schema_migrations onto ms by what
// each names, not by its number: the stores once numbered their
// migrations each on its own (PostgreSQL's 0004_reservations.sql is
// 0005_reservations.sql of the one list), so a database they migrated holds
// the same changes under other numbers. It returns the rows as ms numbers
// them and whether any differs from what the database holds. A row that
// names no migration of ms comes from a newer hub: an error says so.
func Renumber(rows []Applied, ms []Migration) (out []Applied, changed bool, err error) {
	byChange := map[string]Migration{}
	for _, m := range ms {
		byChange[change(m.Name)] = m
	}
	for _, r := range rows {
		m, ok := byChange[change(r.Name)]
		if !ok {
			return nil, false, fmt.Errorf("the database holds migration %d (%s), which this hub does not know: run a newer hub", r.Version, r.Name)
		}
		if m.Version != r.Version || m.Name != r.Name {
			changed = true
		}
		out = append(out, Applied{Version: m.Version, Name: m.Name})
	}
	return out, changed, nil
}

// Pending returns the migrations of ms that applied does not hold, oldest
// first.
func Pending(applied []Applied, ms []Migration) []Migration {
	have := map[int]bool{}
	for _, a := range applied {
		have[a.Version] = true
	}
	var out []Migration
	for _, m := range ms {
		if !have[m.Version] {
			out = append(out, m)
		}
	}
	return out
}
