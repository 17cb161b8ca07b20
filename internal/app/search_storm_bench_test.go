package app_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// BenchmarkSearchStorm: 32 agents each run worst-case phrase searches (a
// phrase of eight words every one of 20,000 messages holds) as fast as
// the hub answers them, over gRPC on loopback, for 5 s, while another
// agent lists its messages every 10 ms. It reports that agent's list
// latency (list-p50-ms, list-p99-ms, list-max-ms) and the searches
// answered (searches) and refused (refused). The hub runs in this process
// with its default budgets.
//
//	go test -run '^$' -bench BenchmarkSearchStorm -benchtime 1x -count 3 ./internal/app/
func BenchmarkSearchStorm(b *testing.B) {
	m := relHub(b, nil)
	ctx := context.Background()
	admin := hubv1.NewAdminServiceClient(m.Conn())
	actx := bearer(ctx, relAdminToken(b, m))
	const stormers, messages = 32, 20_000
	words := "alpha bravo charlie delta echo foxtrot golf hotel"
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	agent := hubv1.NewAgentServiceClient(conn)
	var toks []string
	for i := range stormers {
		r, err := admin.CreateAgent(actx, &hubv1.CreateAgentRequest{Name: fmt.Sprintf("storm-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		toks = append(toks, r.GetToken())
		if _, err := agent.JoinChannel(bearer(ctx, r.GetToken()), &hubv1.JoinChannelRequest{Channel: "#big"}); err != nil {
			b.Fatal(err)
		}
	}
	victim := bearer(ctx, relCreateAgent(b, m, "victim"))
	for i := range messages {
		if _, err := agent.PostMessage(actx, &hubv1.PostMessageRequest{Channel: "#big", Body: fmt.Sprintf("%s %d %s", words, i, words)}); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		var answered, refused int64
		var mu sync.Mutex
		stop := time.Now().Add(5 * time.Second)
		var wg sync.WaitGroup
		for _, tok := range toks {
			wg.Go(func() {
				sctx := bearer(ctx, tok)
				for time.Now().Before(stop) {
					_, err := agent.SearchMessages(sctx, &hubv1.SearchMessagesRequest{Query: `"` + words + `"`})
					mu.Lock()
					if err == nil {
						answered++
					} else {
						refused++
					}
					mu.Unlock()
					if err != nil {
						time.Sleep(time.Millisecond)
					}
				}
			})
		}
		var lat []time.Duration
		for time.Now().Before(stop) {
			t0 := time.Now()
			if _, err := agent.ListMessages(victim, &hubv1.ListMessagesRequest{Limit: 20}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			time.Sleep(10 * time.Millisecond)
		}
		wg.Wait()
		slices.Sort(lat)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(lat[len(lat)/2]), "list-p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "list-p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "list-max-ms")
		b.ReportMetric(float64(answered), "searches")
		b.ReportMetric(float64(refused), "refused")
	}
}
