package faults

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Observers: the orchestrator's ticks on every replica (for leader
// overlaps), how long the replicas take to converge after a fault, and
// how long a revoked token keeps working on each replica.

// tickSample is one replica's last orchestrator tick as GetHubInfo told it.
type tickSample struct {
	Replica int
	Ticks   int64
	At      time.Time // start of the last tick
	Micros  int64
	Err     string
}

// tickWatch samples GetHubInfo on every replica until stop.
type tickWatch struct {
	mu      sync.Mutex
	samples []tickSample
}

func (tw *tickWatch) run(ctx context.Context, admins []hubv1.AdminServiceClient, token string, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for i := 1; i < len(admins); i++ {
			cctx, cancel := context.WithTimeout(ctx, every)
			r, err := admins[i].GetHubInfo(authed(cctx, token), &hubv1.GetHubInfoRequest{})
			cancel()
			if err != nil || r.GetLastTickAt() == nil {
				continue
			}
			tw.mu.Lock()
			tw.samples = append(tw.samples, tickSample{Replica: i, Ticks: r.GetTicks(), At: r.GetLastTickAt().AsTime(),
				Micros: r.GetLastTickMicros(), Err: r.GetLastTickError()})
			tw.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tickErrorRE matches the line a hub logs when a tick fails.
var tickErrorRE = regexp.MustCompile(`^time=(\S+) level=ERROR msg="orchestrator: tick"`)

// tickErrors reads, from each replica's log, when it reported a failed
// tick.
func tickErrors(replicas []*replica) map[int][]time.Time {
	out := map[int][]time.Time{}
	for i := 1; i < len(replicas); i++ {
		f, err := os.Open(replicas[i].logPath)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if m := tickErrorRE.FindStringSubmatch(sc.Text()); m != nil {
				if at, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
					out[i] = append(out[i], at)
				}
			}
		}
		f.Close()
	}
	return out
}

func (tw *tickWatch) all() []tickSample {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return append([]tickSample(nil), tw.samples...)
}

// prober checks that every replica serves again after a fault: /readyz
// answers 200, and a post through one replica wakes a wait parked on
// every replica within a second (its wake-ups work, not only its poll).
type prober struct {
	replicas []*replica // 1-based
	poster   *agent
	waiter   *agent
	cursor   int64
	round    int
	// last is what the last converge saw fail before its round passed.
	last error
}

// converge probes until one round passes or limit ends; it returns how
// long it took, or an error saying what still failed.
func (p *prober) converge(ctx context.Context, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(limit)
	p.last = nil
	for time.Now().Before(deadline) && ctx.Err() == nil {
		err := p.once(ctx)
		if err == nil {
			return time.Since(start), nil
		}
		p.last = err
		time.Sleep(200 * time.Millisecond)
	}
	last := p.last
	return time.Since(start), fmt.Errorf("not converged within %v: %v", limit, last)
}

// once is one probe round.
func (p *prober) once(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for i := 1; i < len(p.replicas); i++ {
		resp, err := client.Get(p.replicas[i].httpBase() + "/readyz")
		if err != nil {
			return fmt.Errorf("r%d /readyz: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("r%d /readyz: %d", i, resp.StatusCode)
		}
	}
	// Each replica's probe wait: parked before the post (its cursor is the
	// newest probe message), done when it returns the post.
	n := len(p.replicas) - 1
	type got struct {
		ids []int64
		at  time.Time
		err error
	}
	results := make([]got, n+1)
	var wg sync.WaitGroup
	wctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			secs := int32(5)
			r, err := p.waiter.clients[i].WaitForMessages(authed(wctx, p.waiter.token), &hubv1.WaitForMessagesRequest{
				TimeoutSeconds: &secs, AfterId: strconv.FormatInt(p.cursor, 10), Limit: 10})
			results[i] = got{at: time.Now(), err: err}
			for _, m := range r.GetMessages() {
				id, _ := strconv.ParseInt(m.GetId(), 10, 64)
				results[i].ids = append(results[i].ids, id)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the waits park
	p.round++
	via := 1 + p.round%n
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	r, err := p.poster.clients[via].PostMessage(authed(pctx, p.poster.token), &hubv1.PostMessageRequest{
		To: []string{p.waiter.name}, Body: fmt.Sprintf("probe %d", p.round)})
	pcancel()
	posted := time.Now()
	if err != nil {
		cancel()
		wg.Wait()
		return fmt.Errorf("probe post via r%d: %v", via, err)
	}
	id, _ := strconv.ParseInt(r.GetMessage().GetId(), 10, 64)
	wg.Wait()
	p.cursor = max(p.cursor, id)
	for i := 1; i <= n; i++ {
		g := results[i]
		switch {
		case g.err != nil:
			return fmt.Errorf("probe wait on r%d: %v", i, g.err)
		case len(g.ids) == 0 || g.ids[len(g.ids)-1] != id:
			return fmt.Errorf("probe wait on r%d returned %v, not the post %d", i, g.ids, id)
		case g.at.Sub(posted) > time.Second:
			return fmt.Errorf("probe wait on r%d woke %v after the post (its wake-ups do not work yet)", i, g.at.Sub(posted).Round(time.Millisecond))
		}
	}
	return nil
}

// revocation is one token revoked during the run, and what each replica
// answered to it afterwards.
type revocation struct {
	Agent    string
	Revoked  time.Time         // the RevokeToken reply
	Accepted map[int]time.Time // per replica: the start of the last call it accepted after Revoked
	Refused  map[int]time.Time // per replica: the first call it refused
}

// revoke creates an agent, makes one call with its token on every
// replica, revokes the token through replica via and then calls every
// replica with it for watch, recording what each answered.
func revoke(ctx context.Context, admins []hubv1.AdminServiceClient, adminToken string, agents []hubv1.AgentServiceClient, name string, via int, watch time.Duration) (*revocation, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	cr, err := admins[via].CreateAgent(authed(cctx, adminToken), &hubv1.CreateAgentRequest{Name: name})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	tok := cr.GetToken()
	for i := 1; i < len(agents); i++ { // warm every replica's cache
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		agents[i].GetStatus(authed(cctx, tok), &hubv1.GetStatusRequest{})
		cancel()
	}
	cctx, cancel = context.WithTimeout(ctx, 5*time.Second)
	_, err = admins[via].RevokeToken(authed(cctx, adminToken), &hubv1.RevokeTokenRequest{Name: name})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("revoke %s: %w", name, err)
	}
	rv := &revocation{Agent: name, Revoked: time.Now(), Accepted: map[int]time.Time{}, Refused: map[int]time.Time{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 1; i < len(agents); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(rv.Revoked) < watch && ctx.Err() == nil {
				start := time.Now()
				cctx, cancel := context.WithTimeout(ctx, time.Second)
				_, err := agents[i].GetStatus(authed(cctx, tok), &hubv1.GetStatusRequest{})
				cancel()
				mu.Lock()
				switch {
				case err == nil:
					rv.Accepted[i] = start
				case status.Code(err) == codes.Unauthenticated:
					if _, seen := rv.Refused[i]; !seen {
						rv.Refused[i] = time.Now()
					}
				}
				mu.Unlock()
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	return rv, nil
}
