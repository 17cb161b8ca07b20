package app_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
)

// BenchmarkRESTPost posts messages over REST (HTTP/1.1 keep-alive on
// loopback) from 8 senders to a hub on a SQLite file, rate limits off. It
// reports the process's CPU time per acknowledged post (cpu-µs/post: the
// hub and the HTTP clients, which run in this process), from getrusage.
//
//	go test -run '^$' -bench BenchmarkRESTPost -benchtime 4000x -count 5 ./internal/app/
func BenchmarkRESTPost(b *testing.B) {
	m := relHub(b, func(m *app.Main) {
		m.RateLimit = admission.RateLimit{}
		m.ReadLimit = admission.RateLimit{}
	})
	tok := relCreateAgent(b, m, "alice")
	relCreateAgent(b, m, "bob")
	const senders = 8
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
	url := "http://" + m.HTTPAddress() + "/v1/messages"
	post := func() error {
		req, err := http.NewRequest("POST", url, strings.NewReader(`{"to":["bob"],"body":"a message of a usual length, about sixty bytes"}`))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
		}
		return nil
	}
	if err := post(); err != nil { // a connection and a warm path
		b.Fatal(err)
	}
	b.SetParallelism(max(1, senders/runtime.GOMAXPROCS(0)))
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := post(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/post")
}

// processCPU is the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
