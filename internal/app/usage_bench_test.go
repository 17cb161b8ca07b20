package app_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/usage/replay"
)

// BenchmarkOTLPExport is the hub's work on one export of a Claude Code
// host, as `hubbench fleet --otlp-every` sends it: the recorded session
// of internal/usage/testdata (metrics, then its events) posted as
// protobuf over HTTP/1.1 keep-alive on loopback by 100 agents' hosts, 8
// at a time, to a hub on a SQLite file, rate limits off, each export the
// session moved to a later time so that it counts anew. It reports the
// process's CPU time per export (cpu-µs/export: two posts, the hub's work
// and the clients', which run in this process; the bodies are made
// before the clock starts), from getrusage; its allocations are the
// process's too.
//
//	go test -run '^$' -bench BenchmarkOTLPExport -benchtime 2000x -count 5 ./internal/app/
func BenchmarkOTLPExport(b *testing.B) {
	m := relHub(b, func(m *app.Main) {
		m.RateLimit = admission.RateLimit{}
		m.ReadLimit = admission.RateLimit{}
	})
	const agents, senders = 100, 8
	tokens := make([]string, agents)
	for i := range tokens {
		tokens[i] = relCreateAgent(b, m, fmt.Sprintf("coder-%d", i))
	}
	s, err := replay.Load("../usage/testdata/claude_metrics.json", "../usage/testdata/claude_logs.json")
	if err != nil {
		b.Fatal(err)
	}
	type export struct {
		token         string
		metrics, logs []byte
	}
	exports := make([]export, b.N+agents)
	start := time.Now().Add(-time.Duration(len(exports)/agents+1) * time.Minute)
	for i := range exports {
		n := int64(i / agents)
		e := export{token: tokens[i%agents]}
		if e.metrics, e.logs, err = s.Export(n, start.Add(time.Duration(n)*time.Minute)); err != nil {
			b.Fatal(err)
		}
		exports[i] = e
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
	base := "http://" + m.HTTPAddress() + "/otlp/v1/"
	post := func(path, token string, body []byte) error {
		req, err := http.NewRequest("POST", base+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST %s: HTTP %d: %s", path, resp.StatusCode, got)
		}
		return nil
	}
	send := func(e export) error {
		if err := post("metrics", e.token, e.metrics); err != nil {
			return err
		}
		return post("logs", e.token, e.logs)
	}
	// Each host's first export takes back what its metrics counted before
	// its events came: the steady state is what follows.
	for _, e := range exports[:agents] {
		if err := send(e); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	next.Store(agents - 1)
	b.SetParallelism(max(1, senders/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := send(exports[next.Add(1)]); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/export")
}
