package app

import (
	"context"
	"path/filepath"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/orchestrator"
	"github.com/agenthub/hub/internal/store/postgres"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// Store is what the hub needs of its store: hub.Store plus the facts that
// /metrics and GetHubInfo show.
type Store interface {
	hub.Store
	// SchemaVersion returns the number of the newest applied migration.
	SchemaVersion() int
	// CountEvents returns how many events of kind the store holds.
	CountEvents(ctx context.Context, kind string) (int64, error)
	// QueuedWrites returns how many writes wait for the store's writer.
	QueuedWrites() int
	// WriteBatches returns how many batches of writes the store's writer
	// has committed together (group commit), and how many writes they held.
	WriteBatches() (batches, writes int64)
}

// diskFuller is a store that knows when its last write failed for want of
// space (SQLite does); /readyz then fails.
type diskFuller interface{ DiskFull() bool }

// checkpointer is a store that copies its write-ahead log into its file on
// a connection of its own (SQLite does); /metrics shows how often and how
// long.
type checkpointer interface{ Checkpoints() sqlite.CheckpointStats }

// openDatabase opens PostgreSQL when m.DatabaseURL is set (several replicas
// may share it: their orchestrators elect a leader, and each replica
// listens for the others' posts and changed agents), else the SQLite file in the data dir
// (one process: it always leads, and the fallback poll is its only
// outside watcher).
func (m *Main) openDatabase(ctx context.Context) error {
	if m.DatabaseURL == "" {
		db, err := sqlite.Open(ctx, filepath.Join(m.DataDir, "hub.db"), sqlite.Options{Synchronous: m.Synchronous, MaxSize: m.MaxDBSize, Clock: m.Clock})
		if err != nil {
			return err
		}
		m.Store, m.leader = db, orchestrator.AlwaysLeader{}
		return nil
	}
	db, err := postgres.Open(ctx, m.DatabaseURL, postgres.Options{Logger: m.Logger, Clock: m.Clock})
	if err != nil {
		return err
	}
	m.Store, m.leader = db, db.Leader()
	m.Config.SharedStore = true
	m.watchPosts = func(ctx context.Context) error {
		return db.Watch(ctx, postgres.Reports{PostedTo: m.Services.Waits.PostedTo, Posted: m.Services.Waits.Poke, Resync: m.Services.Waits.RecheckWaits, AgentChanged: m.Services.Agents.AgentChanged, ForgetAgents: m.Services.Agents.ForgetAgents, Listening: m.Services.Agents.ListenerConnected, Heard: m.Services.Agents.ListenerHeard, TasksReady: m.Services.Tasks.TasksReady, PersonRevoked: m.Services.People.PersonRevoked, ItemsClosed: m.Services.Inbox.ItemsClosed})
	}
	return nil
}
