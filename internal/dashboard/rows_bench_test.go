package dashboard

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkRowEvent measures what the row caster spends on one "agents"
// event of 150 changed rows (about a 250 ms gap's worth at 2,000 busy
// agents): the rows' hashes and their JSON, every row new to the caster.
func BenchmarkRowEvent(b *testing.B) {
	const n = 150
	at := timestamppb.New(time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC))
	rows := make([]*hubv1.AgentOverview, n)
	for i := range rows {
		rows[i] = &hubv1.AgentOverview{
			Agent: &hubv1.Agent{Name: fmt.Sprintf("agent-%04d", i), Presence: "active", LastSeenAt: at, Health: "healthy",
				Reachable: true, SinceLast: 3},
			Health: &hubv1.AgentHealth{Agent: fmt.Sprintf("agent-%04d", i), State: "healthy", Presence: "active",
				LastActivityLogAt: at, LastCheckpointAt: at, LastSeenAt: at, EvaluatedAt: at},
			UnreadCount: 4, MentionCount: 1, ParkedWaits: 1,
		}
	}
	c := newRowCaster(Options{Rows: func([]hub.AgentOverview) []*hubv1.AgentOverview { return rows }}, make(chan struct{}))
	ch := hub.OverviewChanges{Rows: make([]hub.AgentOverview, n), Beat: 42}
	b.ReportAllocs()
	for b.Loop() {
		clear(c.sent)
		if c.event(ch) == nil {
			b.Fatal("no event")
		}
	}
}
