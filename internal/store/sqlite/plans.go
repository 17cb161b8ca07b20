package sqlite

/*
typedef struct sqlite3 sqlite3;
extern int sqlite3_db_config(sqlite3*, int, ...);
extern int sqlite3_auto_extension(void (*)(void));

// hub_stable_plans turns on SQLITE_DBCONFIG_ENABLE_QPSG (1007): a
// statement's plan is made without looking at the values bound to it.
static int hub_stable_plans(sqlite3 *db, char **err, const void *api) {
	return sqlite3_db_config(db, 1007, 1, (int*)0);
}

static int hub_register_stable_plans(void) {
	return sqlite3_auto_extension((void (*)(void))hub_stable_plans);
}
*/
import "C"

import (
	"fmt"
	"sync"
)

// stablePlans gives every SQLite connection the process opens from now on
// plans that do not depend on the values bound to a statement. Without
// it, SQLite marks a statement with "LIMIT ?", or an equality on a
// bound value that its planner weighs, to be compiled again when that
// value changes, and mattn/go-sqlite3 clears a statement's bindings before
// every run (which counts as a change): such a statement, though kept in
// the connection's statement cache, was parsed and planned again on every
// run — an inbox read, the counts of an unread badge, a channel's members,
// every due-work query with a LIMIT. The hub's queries name the values
// their indexes need as literals, so no plan was better for the values.
var stablePlans = sync.OnceValue(func() error {
	if rc := C.hub_register_stable_plans(); rc != 0 {
		return fmt.Errorf("make the query plans stable: SQLite error %d", rc)
	}
	return nil
})
