// Package hub is the domain of Agent Hub: agents and their tokens,
// messages and read cursors, long-poll waits, presence, liveness (activity
// logs and checkpoints, deep work, health), events, and what the
// orchestrator schedules (beats, nudges, heartbeat pulses, cron jobs).
//
// The package is cut by noun. For each noun, NOUN.go holds the pure rules
// (values in, decisions out: no store, no clock read) and NOUN_service.go
// the Service methods that load, decide and save, with the noun's store
// queries (its group of Tx, such as NudgeTx in nudge_service.go). Service
// (service.go) ties them to a Store (store.go) and a Clock (clock.go);
// errors are *Error values with a code (errors.go).
//
// The package imports nothing else of this module: adapters (the gRPC
// server, the SQLite store, the orchestrator) import it.
package hub
