package dashboard

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
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

// BenchmarkRowChange measures the row caster on the most common event of a
// busy fleet: 150 rows sent before, each with a new unread count (a post
// to a channel of 150), read fresh as the REST API writes them.
func BenchmarkRowChange(b *testing.B) {
	const n = 150
	at := timestamppb.New(time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC))
	rows := make([]*hubv1.AgentOverview, n)
	for i := range rows {
		rows[i] = &hubv1.AgentOverview{
			Agent: &hubv1.Agent{Name: fmt.Sprintf("agent-%04d", i), Presence: "active", LastSeenAt: at, Health: "healthy",
				Reachable: true, SinceLast: 3, Role: "coder", Project: "default", CurrentHeartbeatId: "20261202060000", LastInteractionBeat: 40,
				Paths: []*hubv1.DeliveryPath{{Kind: "wait", LastSeenAt: at, Live: true}}},
			Health: &hubv1.AgentHealth{Agent: fmt.Sprintf("agent-%04d", i), State: "healthy", Presence: "active",
				LastActivityAt: at, LastActivityLogAt: at, LastCheckpointAt: at, LastSeenAt: at, EvaluatedAt: at},
			UnreadCount: 4, MentionCount: 1, ParkedWaits: 1,
		}
	}
	var read []*hubv1.AgentOverview
	c := newRowCaster(Options{Rows: func([]hub.AgentOverview) []*hubv1.AgentOverview { return read }}, make(chan struct{}))
	ch := hub.OverviewChanges{Rows: make([]hub.AgentOverview, n), Beat: 42}
	fresh := func(unread int64) {
		read = make([]*hubv1.AgentOverview, n)
		for i, r := range rows {
			read[i] = proto.Clone(r).(*hubv1.AgentOverview)
			read[i].UnreadCount = unread
		}
	}
	fresh(4)
	c.event(ch) // every row sent once
	var size int
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		fresh(int64(5 + i))
		b.StartTimer()
		ev := c.event(ch)
		if ev == nil {
			b.Fatal("no event")
		}
		size = len(ev)
	}
	b.ReportMetric(float64(size)/n, "B/row")
}
