package sqlite

/*
#cgo LDFLAGS: -lm
#include <math.h>
#include <stdint.h>
#include <string.h>

// The few SQLite functions this file calls, from the SQLite that
// mattn/go-sqlite3 links into the binary.
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_context sqlite3_context;
typedef struct sqlite3_value sqlite3_value;
extern int sqlite3_create_function(sqlite3*, const char*, int, int, void*,
	void (*)(sqlite3_context*, int, sqlite3_value**),
	void (*)(sqlite3_context*, int, sqlite3_value**),
	void (*)(sqlite3_context*));
extern const void *sqlite3_value_blob(sqlite3_value*);
extern int sqlite3_value_bytes(sqlite3_value*);
extern double sqlite3_value_double(sqlite3_value*);
extern void sqlite3_result_double(sqlite3_context*, double);
extern int sqlite3_auto_extension(void (*)(void));

// hub_bm25(matchinfo(t, 'pcx'), docs) scores one row of an FTS4 match by
// its first column (the body; the others, the readers, are filters) among
// docs documents: Okapi BM25 with FTS5's k1 (1.2) and idf floor, positive
// (higher is better), without the length normalisation (b = 0): the
// index keeps no document lengths (matchinfo=fts3), whose upkeep cost
// every post a write and every ranked match a read.
static void hub_bm25(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	const unsigned char *blob = sqlite3_value_blob(argv[0]);
	int n = sqlite3_value_bytes(argv[0]) / 4;
	double docs = sqlite3_value_double(argv[1]);
	enum { most = 2 + 3 * 64 * 4 };
	uint32_t v[most];
	if (blob == 0 || n < 2) {
		sqlite3_result_double(ctx, 0);
		return;
	}
	if (n > most) n = most;
	memcpy(v, blob, 4 * (size_t)n);
	int phrases = v[0], cols = v[1];
	double score = 0;
	for (int p = 0; p < phrases && cols > 0; p++) {
		int x = 2 + 3 * p * cols; // phrase p, column 0
		if (x + 2 >= n) break;
		double hits = v[x], with = v[x + 2];
		if (hits == 0) continue;
		double idf = log((docs - with + 0.5) / (with + 0.5));
		if (idf < 1e-6) idf = 1e-6;
		score += idf * hits * 2.2 / (hits + 1.2);
	}
	sqlite3_result_double(ctx, score);
}

static int hub_functions(sqlite3 *db, char **err, const void *api) {
	return sqlite3_create_function(db, "hub_bm25", 2, 1 | 0x800, 0, hub_bm25, 0, 0); // SQLITE_UTF8 | SQLITE_DETERMINISTIC
}

static int hub_register(void) {
	return sqlite3_auto_extension((void (*)(void))hub_functions);
}
*/
import "C"

import (
	"fmt"
	"sync"
)

var registered = sync.OnceValue(func() error {
	if rc := C.hub_register(); rc != 0 {
		return fmt.Errorf("register the hub's SQL functions: SQLite error %d", rc)
	}
	return nil
})

// register gives every SQLite connection the process opens from now on the
// hub's SQL functions: hub_bm25, the ranking of a full-text match, which
// FTS4 leaves to its user. It is C, called by SQLite itself: a Go function
// costs a cgo call back per matching row (3 µs; 1 s for a word found in
// 300,000 messages). The connections' plans are made stable too
// (plans.go).
func register() error {
	if err := registered(); err != nil {
		return err
	}
	return stablePlans()
}
