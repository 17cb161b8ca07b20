package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/agenthub/hub/internal/hub"
	"github.com/mattn/go-sqlite3"
)

// addressees is the writer's cache of what routing a post reads of the
// agents it names (hub.Addressee) and of whether a name is an active
// person's (hub.PersonTx.ActivePerson, asked first of every name a post
// gives), so that a post costs no statement per recipient. It is exact, not a cache that may be late: an entry is what
// the agents table holds in the current write transaction's view, because
// the cache is emptied
//
//   - by the statement that changes an agent's ID, name, project or
//     disabled state, or deletes it: TEMP triggers on the writer
//     connection call hub_addressees_changed() (an agent inserted
//     invalidates nothing: no entry can hold a name that did not exist);
//     and by the statement that inserts, renames, revokes or deletes a
//     person (a person inserted does: the cache holds names that are no
//     person's);
//   - when a savepoint or a transaction rolls back, or a commit fails: an
//     entry read after a change that is then undone would hold the undone
//     state;
//   - when another connection or process has committed since the writer's
//     last transaction: each write transaction starts by reading PRAGMA
//     data_version, which changes exactly then;
//   - when the writer connection is (re)opened: the cache stays off until
//     arm has created the triggers on that connection.
//
// Only the writer's transactions use it; reads (View) go to the table.
type addressees struct {
	mu      sync.Mutex
	m       map[string]hub.Addressee
	people  map[string]bool // name → an active person's
	on      bool            // the triggers exist on the writer connection
	version int64           // PRAGMA data_version at the last check
}

// addresseesMax bounds the cache; past it, it starts over.
const addresseesMax = 100_000

// addresseeTriggers call hub_addressees_changed() on the writer connection
// whenever an agent's routing changes or a person comes or goes.
var addresseeTriggers = []string{
	`CREATE TEMP TRIGGER IF NOT EXISTS hub_addressees_update AFTER UPDATE OF id, name, project, disabled_at ON main.agents
		WHEN OLD.id IS NOT NEW.id OR OLD.name IS NOT NEW.name OR OLD.project IS NOT NEW.project OR OLD.disabled_at IS NOT NEW.disabled_at
		BEGIN SELECT hub_addressees_changed(); END`,
	`CREATE TEMP TRIGGER IF NOT EXISTS hub_addressees_delete AFTER DELETE ON main.agents
		BEGIN SELECT hub_addressees_changed(); END`,
	`CREATE TEMP TRIGGER IF NOT EXISTS hub_people_insert AFTER INSERT ON main.people
		BEGIN SELECT hub_addressees_changed(); END`,
	`CREATE TEMP TRIGGER IF NOT EXISTS hub_people_update AFTER UPDATE OF name, revoked_at ON main.people
		BEGIN SELECT hub_addressees_changed(); END`,
	`CREATE TEMP TRIGGER IF NOT EXISTS hub_people_delete AFTER DELETE ON main.people
		BEGIN SELECT hub_addressees_changed(); END`,
}

// connect is the writer connection's hook: a new connection has no
// triggers yet, so the cache is off and empty until arm.
func (c *addressees) connect(conn *sqlite3.SQLiteConn) error {
	c.mu.Lock()
	c.on, c.m, c.people = false, nil, nil
	c.mu.Unlock()
	return conn.RegisterFunc("hub_addressees_changed", func() int64 { c.clear(); return 0 }, false)
}

// arm creates the triggers on the writer's connection (after the
// migrations: they need the agents table) and turns the cache on.
func (c *addressees) arm(ctx context.Context, w *sql.DB) error {
	conn, err := w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("addressee triggers: %w", err)
	}
	defer conn.Close()
	for _, q := range addresseeTriggers {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("addressee triggers: %w", err)
		}
	}
	var version int64
	if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&version); err != nil {
		return fmt.Errorf("addressee triggers: %w", err)
	}
	c.mu.Lock()
	c.on, c.m, c.people, c.version = true, nil, nil, version
	c.mu.Unlock()
	return nil
}

// begin is called at the start of each write transaction, inside it,
// with the function that reads the writer connection's PRAGMA
// data_version: commits made meanwhile by any other connection empty the
// cache.
func (c *addressees) begin(dataVersion func() (int64, error)) error {
	c.mu.Lock()
	on := c.on
	c.mu.Unlock()
	if !on {
		return nil
	}
	version, err := dataVersion()
	if err != nil {
		return err
	}
	c.mu.Lock()
	if version != c.version {
		c.m, c.people, c.version = nil, nil, version
	}
	c.mu.Unlock()
	return nil
}

// clear empties the cache (a change, a rollback, a failed commit).
func (c *addressees) clear() {
	c.mu.Lock()
	c.m, c.people = nil, nil
	c.mu.Unlock()
}

func (c *addressees) get(name string) (hub.Addressee, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[name]
	return a, ok
}

func (c *addressees) put(a hub.Addressee) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on {
		return
	}
	if c.m == nil || len(c.m) >= addresseesMax {
		c.m = make(map[string]hub.Addressee)
	}
	c.m[a.Name] = a
}

// AddresseeByName implements hub.AgentTx: from the writer's cache in a
// write transaction, else from the table.
func (t *Tx) AddresseeByName(name string) (hub.Addressee, error) {
	if t.names != nil {
		if a, ok := t.names.get(name); ok {
			return a, nil
		}
	}
	a, err := t.Statements.AddresseeByName(name)
	if err == nil && t.names != nil {
		t.names.put(a)
	}
	return a, err
}

func (c *addressees) person(name string) (active, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	active, known = c.people[name]
	return active, known
}

func (c *addressees) putPerson(name string, active bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on {
		return
	}
	if c.people == nil || len(c.people) >= addresseesMax {
		c.people = make(map[string]bool)
	}
	c.people[name] = active
}

// ActivePerson implements hub.PersonTx: from the writer's cache in a
// write transaction, else from the table.
func (t *Tx) ActivePerson(name string) (bool, error) {
	if t.names != nil {
		if active, ok := t.names.person(name); ok {
			return active, nil
		}
	}
	var active bool
	if err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM people WHERE name = ? AND revoked_at = 0)`, name).Scan(&active); err != nil {
		return false, err
	}
	if t.names != nil {
		t.names.putPerson(name, active)
	}
	return active, nil
}
