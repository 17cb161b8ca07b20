package hub

import "time"

// Status is the caller's view of the hub (the seeds' check_hub_status).
type Status struct {
	Agent              string
	Unread             int64
	Mentions           int64
	LatestMessageID    int64
	CurrentHeartbeatID string
	Beat               int64
	SinceLast          int64
	SinceLastReading   string
	Health             Health
	DeepWork           *DeepWork
	Online             []string
	Waiting            []string
	Time               time.Time
	// RateLimitedUntil is set while the agent's host reports rate
	// limiting (usage.go).
	RateLimitedUntil time.Time
}
