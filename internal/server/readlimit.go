package server

// DefaultReadLimit is the per-agent budget of read calls: generous (an
// agent reads a few times a minute; a waiting loop re-waits after each
// wake-up), yet a tight loop of list calls no longer takes the CPU the
// writer needs.
var DefaultReadLimit = RateLimit{PerSecond: 200, Burst: 400}

// readMethods are the AgentService calls that read: they draw on the read
// budget, separate from the write budget. A wait counts once when it
// starts, however long it is parked.
var readMethods = map[string]bool{
	agentServicePrefix + "GetStatus":               true,
	agentServicePrefix + "ListMessages":            true,
	agentServicePrefix + "WaitForMessages":         true,
	agentServicePrefix + "GetDeepWork":             true,
	agentServicePrefix + "GetHeartbeatElapsedTime": true,
	agentServicePrefix + "ListReservations":        true,
	agentServicePrefix + "GetMessageReceipts":      true,
}

// SetReadLimit sets the per-agent read budget; call it before serving. A
// zero or negative PerSecond turns it off.
func (s *Server) SetReadLimit(rl RateLimit) { s.readLimiter = limiterFor(rl) }
