package sqlite

import (
	"context"
	"database/sql"
	"testing"
)

// Every connection that reads the database file maps it: each reader of a
// full pool and the writer, at the size the store's cap allows. The
// writer keeps its statement journal in memory.
func TestConnectionsMapTheFile(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		maxSize int64
		want    int64
	}{{0, mmapSize}, {64 << 20, 64 << 20}, {1 << 40, mmapSize}} {
		const readers = 3
		db, err := Open(ctx, tempPath(t), Options{Readers: readers, MaxSize: c.maxSize})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		var got int64
		if err := db.wc.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("max size %d: the writer's mmap_size = %d, want %d", c.maxSize, got, c.want)
		}
		var temp int
		if err := db.wc.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&temp); err != nil {
			t.Fatal(err)
		}
		if temp != 2 {
			t.Errorf("the writer's temp_store = %d, want 2 (memory)", temp)
		}
		var held []*sql.Conn // held at once: each is a connection of its own
		for range readers {
			conn, err := db.r.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, conn)
			if err := conn.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("max size %d: reader %d's mmap_size = %d, want %d", c.maxSize, len(held), got, c.want)
			}
		}
		for _, conn := range held {
			conn.Close()
		}
	}
}
