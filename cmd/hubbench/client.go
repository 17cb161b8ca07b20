package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// agentRef is an agent the benchmark created, with its token.
type agentRef struct {
	name  string
	token string
	md    metadata.MD
}

// authed returns ctx carrying the agent's bearer token.
func (a *agentRef) authed(ctx context.Context) context.Context {
	return metadata.NewOutgoingContext(ctx, a.md)
}

func bearer(token string) metadata.MD {
	return metadata.Pairs("authorization", "Bearer "+token)
}

// pool is a small set of gRPC connections to one hub; thousands of calls
// multiplex over them as HTTP/2 streams.
type pool struct {
	conns []*grpc.ClientConn
	agent []hubv1.AgentServiceClient
	admin hubv1.AdminServiceClient
	adm   metadata.MD
}

// dial opens n connections to addr (loopback only) and checks the admin token.
func dial(ctx context.Context, addr, adminToken string, n int) (*pool, error) {
	p := &pool{adm: bearer(adminToken)}
	for i := 0; i < n; i++ {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			p.close()
			return nil, fmt.Errorf("connect to %s: %w", addr, err)
		}
		c.Connect()
		p.conns = append(p.conns, c)
		p.agent = append(p.agent, hubv1.NewAgentServiceClient(c))
	}
	p.admin = hubv1.NewAdminServiceClient(p.conns[0])
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := p.hubInfo(cctx); err != nil {
		p.close()
		return nil, fmt.Errorf("hub at %s: %w", addr, err)
	}
	return p, nil
}

func (p *pool) close() {
	for _, c := range p.conns {
		c.Close()
	}
}

// client returns the agent client on connection i (mod the pool size).
func (p *pool) client(i int) hubv1.AgentServiceClient { return p.agent[i%len(p.agent)] }

func (p *pool) adminCtx(ctx context.Context) context.Context {
	return metadata.NewOutgoingContext(ctx, p.adm)
}

func (p *pool) hubInfo(ctx context.Context) (*hubv1.GetHubInfoResponse, error) {
	return p.admin.GetHubInfo(p.adminCtx(ctx), &hubv1.GetHubInfoRequest{})
}

// createAgents creates n agents named prefix-NNNNN through the AdminService,
// conc at a time.
func createAgents(ctx context.Context, p *pool, prefix string, n, conc int, progress func(string, ...any)) ([]*agentRef, error) {
	out := make([]*agentRef, n)
	var next, done atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	stopProgress := ticker(2*time.Second, func() {
		progress("creating agents: %d/%d (%.0f/s)", done.Load(), n, float64(done.Load())/time.Since(start).Seconds())
	})
	defer stopProgress()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			admin := hubv1.NewAdminServiceClient(p.conns[w%len(p.conns)])
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				name := fmt.Sprintf("%s-%05d", prefix, i)
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				r, err := admin.CreateAgent(p.adminCtx(cctx), &hubv1.CreateAgentRequest{Name: name, Role: "bench"})
				cancel()
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("create agent %s: %w", name, err) })
					return
				}
				out[i] = &agentRef{name: name, token: r.GetToken(), md: bearer(r.GetToken())}
				done.Add(1)
			}
		}(w)
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return nil, firstErr
	}
	progress("created %d agents in %s (%.0f/s)", n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())
	return out, nil
}

// forEach runs f for every agent, conc at a time, and returns the first error.
func forEach(ctx context.Context, agents []*agentRef, conc int, f func(ctx context.Context, i int, a *agentRef) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(agents) || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i, agents[i]); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("%s: %w", agents[i].name, err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// ticker calls f every d until the returned stop function is called.
func ticker(d time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// runPrefix returns a name prefix unique to this run, so that runs against
// an existing hub do not collide.
func runPrefix() string {
	return "bench" + strings.ToLower(fmt.Sprintf("%x", time.Now().Unix()&0xffffff))
}
