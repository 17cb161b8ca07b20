package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// dashSim is one open dashboard on the agents view, doing over HTTP what
// the page served by the hub under test does (internal/dashboard/static):
// sign in (GET /v1/admin/info), follow the change stream, and
//
//   - with a hub whose stream says only which topics changed: re-read the
//     projects and every agent's overview after each change event, one
//     read at a time, the events of a read merged into the next;
//   - with a hub whose stream carries the changed agents' rows (its hello
//     says "deltas"): read every overview once per connection (and at a
//     "resync"), beside the stream, then take the rows from the stream.
//
// What it measures: how long the probe's unread count takes to show on
// this dashboard (probeMatcher), and with the first kind of hub how long
// after an event its follow-up read is answered.
type dashSim struct {
	f      *fleet
	i      int
	client *http.Client
	base   string

	mu        sync.Mutex
	probeSeen int64
}

func newDashSim(f *fleet, i int) *dashSim {
	// A browser's own connections, from an address of its own.
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 2, 0, byte(i+1))}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 6}
	return &dashSim{f: f, i: i, client: &http.Client{Transport: tr}, base: "http://" + f.hub.httpAddr}
}

func (d *dashSim) run(ctx context.Context) {
	defer d.client.CloseIdleConnections()
	for ctx.Err() == nil {
		err := d.session(ctx)
		if ctx.Err() != nil {
			return
		}
		d.f.stats.call(opDashboard, 0, err)
		sleepUntil(ctx, time.Now().Add(time.Second)) // the page retries after a lost stream
	}
}

// get reads path with the admin token and returns the body.
func (d *dashSim) get(ctx context.Context, path string) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.f.hub.token)
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: HTTP %d: %.200s", path, resp.StatusCode, b)
	}
	return b, err
}

// readAgents is the agents view's full read; it notes the probe's count.
func (d *dashSim) readAgents(ctx context.Context) error {
	if _, err := d.get(ctx, "/v1/admin/projects"); err != nil {
		return err
	}
	b, err := d.get(ctx, "/v1/admin/agent-overviews")
	if err != nil {
		return err
	}
	d.f.stats.dashBytes.Add(int64(len(b)))
	if n, ok := probeCount(b, d.f.probe.name); ok {
		d.sawProbe(n, time.Now())
	}
	return nil
}

// sawProbe records the probe's unread count n, seen at.
func (d *dashSim) sawProbe(n int64, at time.Time) {
	d.mu.Lock()
	d.probeSeen = d.f.stats.probe.seen(d.probeSeen, n, at)
	d.mu.Unlock()
}

// probeCount returns the unread_count of the row of agent name in b, rows
// as the REST API writes them: 0 when its row has none (the API leaves
// zeros out).
func probeCount(b []byte, name string) (int64, bool) {
	i := bytes.Index(b, []byte(`"name":"`+name+`"`))
	if i < 0 {
		return 0, false
	}
	row := b[i:]
	if j := bytes.Index(row, []byte(`{"agent":{`)); j >= 0 { // the next row
		row = row[:j]
	}
	n, ok := unreadIn(row)
	return n, ok || !bytes.Contains(row, []byte(`"unread_count"`))
}

// unreadIn returns the value of the first unread_count in b.
func unreadIn(b []byte) (int64, bool) {
	const key = `"unread_count":`
	j := bytes.Index(b, []byte(key))
	if j < 0 {
		return 0, false
	}
	v := b[j+len(key):]
	v = bytes.TrimLeft(v, ` "`)
	k := bytes.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if k <= 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v[:k]), 10, 64)
	return n, err == nil
}

// agentsEvent is an "agents" event of the stream: whole rows, and changes
// that hold only a row's fields that changed and name those that became
// empty (internal/dashboard/rows.go).
type agentsEvent struct {
	Rows    []json.RawMessage `json:"rows"`
	Changes []struct {
		Row     json.RawMessage `json:"row"`
		Cleared []string        `json:"cleared"`
	} `json:"changes"`
}

// probeIn returns the unread count of agent name that ev says, if it says
// one: a whole row's (0 when it has none), or a change's (its count, 0
// when it clears it; none when the count did not change).
func (ev *agentsEvent) probeIn(name string) (int64, bool) {
	key := []byte(`"name":"` + name + `"`)
	for _, r := range ev.Rows {
		if bytes.Contains(r, key) {
			return probeCount(r, name)
		}
	}
	for _, c := range ev.Changes {
		if bytes.Contains(c.Row, key) {
			if n, ok := unreadIn(c.Row); ok {
				return n, true
			}
			return 0, slices.Contains(c.Cleared, "unread_count")
		}
	}
	return 0, false
}

// session is one sign-in and one stream, until the stream ends.
func (d *dashSim) session(ctx context.Context) error {
	d.mu.Lock()
	d.probeSeen = -1
	d.mu.Unlock()
	if _, err := d.get(ctx, "/v1/admin/info"); err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, d.base+"/v1/admin/stream", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.f.hub.token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("stream: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}

	// The old page's refresh loop: one read at a time; the events that
	// come during a read ask for one more. pendingSince is the arrival
	// of the oldest event no read has answered yet.
	var mu sync.Mutex
	var pendingSince time.Time
	kick := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	refresh := func(at time.Time) {
		mu.Lock()
		if pendingSince.IsZero() {
			pendingSince = at
		}
		mu.Unlock()
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	wg.Go(func() {
		for first := true; ; first = false {
			select {
			case <-sctx.Done():
				return
			case <-kick:
			}
			mu.Lock()
			since := pendingSince
			pendingSince = time.Time{}
			mu.Unlock()
			t0 := time.Now()
			if err := d.readAgents(sctx); err != nil {
				if sctx.Err() == nil {
					d.f.stats.call(opDashboard, 0, err)
				}
				continue
			}
			if first {
				d.f.stats.firstLoad.add(time.Since(t0))
			}
			d.f.stats.eventRead.add(time.Since(since))
		}
	})

	// The full read of the rows (at hello and resync) runs beside the
	// stream, as the page's does: the stream is read on meanwhile, so a
	// slow read does not hold the hub's writes of rows up until the
	// stream falls behind and is told to resync.
	full := make(chan struct{}, 1)
	wg.Go(func() {
		for {
			select {
			case <-sctx.Done():
				return
			case <-full:
			}
			t0 := time.Now()
			if err := d.readAgents(sctx); err != nil {
				if sctx.Err() == nil {
					d.f.stats.call(opDashboard, 0, err)
				}
				continue
			}
			d.f.stats.firstLoad.add(time.Since(t0))
		}
	})

	deltas := false
	return readSSE(resp.Body, func(event string, data []byte) error {
		at := time.Now()
		switch event {
		case "hello":
			var h struct {
				Deltas bool `json:"deltas"`
			}
			json.Unmarshal(data, &h)
			deltas = h.Deltas
			if !deltas {
				refresh(at)
				return nil
			}
			fallthrough
		case "resync":
			select {
			case full <- struct{}{}:
			default: // one is due already
			}
		case "change":
			if !deltas {
				refresh(at)
			}
		case "agents":
			var ev agentsEvent
			if err := json.Unmarshal(data, &ev); err != nil {
				return fmt.Errorf("agents event: %w", err)
			}
			d.f.stats.dashRows.Add(int64(len(ev.Rows) + len(ev.Changes)))
			d.f.stats.dashBytes.Add(int64(len(data)))
			if n, ok := ev.probeIn(d.f.probe.name); ok {
				d.sawProbe(n, at)
			}
		}
		return nil
	})
}

// readSSE calls emit for each event of a Server-Sent Events stream until
// it ends or emit fails.
func readSSE(r io.Reader, emit func(event string, data []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	event, data := "message", []byte(nil)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != nil {
				if err := emit(event, data); err != nil {
					return err
				}
			}
			event, data = "message", nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(line[len("data:"):], " ")...)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}
