package faults

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// The nemesis injects one fault at a time from a schedule drawn from the
// run's seed: which kind, which target, how long it holds; after each heal
// it measures how long the replicas take to converge.

// faultKinds are the faults the nemesis draws from.
var faultKinds = []string{
	"kill-replica",         // SIGKILL one replica, restart it
	"kill-replicas",        // SIGKILL several replicas at once, restart them
	"pg-stop",              // PostgreSQL stopped cleanly, started again
	"pg-kill",              // every PostgreSQL process SIGKILLed, restarted (crash recovery)
	"part-replica-pg",      // a replica and PostgreSQL cannot reach each other
	"part-clients-replica", // the clients and a replica cannot reach each other
	"part-asym",            // packets dropped one way only, on one of those links
	"leader-isolate",       // the orchestrator's leader cut from PostgreSQL while it holds the lock
	"latency",              // 50–200 ms with jitter on a link, through the proxy
	"bandwidth",            // a link limited to a few KB/s
	"timeout",              // a link stalls, then its connections close
	"reset-peer",           // a link's connections reset
}

// fault is one injected fault and what followed it.
type fault struct {
	Kind, Target, Detail string
	Start, Healed        time.Time
	Converge             time.Duration
	ConvergeErr          string
	Failover             time.Duration // leader-isolate: until another replica led (0: none during the fault)
	// Posts made during the fault through the replicas it did not
	// target: how many were acknowledged and how many were not.
	OthersOK, OthersNot int
}

// targets reports which replicas a fault targets (by name in its target:
// "r2", "r1+r3", "client-r2", "pg-r3"); "pg" targets every replica.
func (f *fault) targets(i int) bool {
	if f.Target == "pg" {
		return true
	}
	for _, t := range strings.Split(f.Target, "+") {
		if strings.HasSuffix(t, fmt.Sprintf("r%d", i)) {
			return true
		}
	}
	return false
}

type nemesis struct {
	rng      *rand.Rand
	rig      *rig
	pg       *pgCluster
	replicas []*replica // 1-based
	px       *proxies
	kinds    []string
	logf     func(format string, args ...any)
}

func (n *nemesis) replicaCount() int { return len(n.replicas) - 1 }

func (n *nemesis) pick() int { return 1 + n.rng.IntN(n.replicaCount()) }

// dbPeers are the addresses replica i reaches PostgreSQL at.
func dbPeers(i int) []string {
	if pgProxy(i) == "" {
		return []string{pgAddr}
	}
	return []string{fmt.Sprintf("%s:%d", proxyAddr, pgProxyPort(i))}
}

// inject starts a fault of kind and returns how to heal it.
func (n *nemesis) inject(ctx context.Context, kind string, f *fault) (heal func() error, err error) {
	switch kind {
	case "kill-replica", "kill-replicas":
		targets := []int{n.pick()}
		if kind == "kill-replicas" {
			targets = n.rng.Perm(n.replicaCount())[:2+n.rng.IntN(n.replicaCount()-1)]
			for k := range targets {
				targets[k]++
			}
		}
		var names []string
		for _, i := range targets {
			n.replicas[i].kill()
			names = append(names, n.replicas[i].name())
		}
		f.Target = strings.Join(names, "+")
		return func() error {
			for _, i := range targets {
				if err := n.replicas[i].start(ctx, 90*time.Second); err != nil {
					return err
				}
			}
			return nil
		}, nil
	case "pg-stop":
		f.Target = "pg"
		n.pg.stop()
		return func() error { return n.pg.start(ctx) }, nil
	case "pg-kill":
		f.Target = "pg"
		n.pg.crash()
		return func() error { return n.pg.start(ctx) }, nil
	case "part-replica-pg", "leader-isolate":
		i := n.pick()
		if kind == "leader-isolate" {
			if i = n.leader(); i == 0 {
				return nil, fmt.Errorf("no replica leads")
			}
		}
		f.Target = n.replicas[i].name()
		return n.cut(i, dbPeers(i), true, true)
	case "part-clients-replica":
		i := n.pick()
		f.Target = n.replicas[i].name()
		return n.cut(i, []string{clientIP}, true, true)
	case "part-asym":
		i := n.pick()
		in := n.rng.IntN(2) == 0
		peers, link := dbPeers(i), "pg"
		if n.rng.IntN(2) == 0 {
			peers, link = []string{clientIP}, "clients"
		}
		f.Target = n.replicas[i].name()
		if in {
			f.Detail = fmt.Sprintf("%s→%s dropped", link, f.Target)
		} else {
			f.Detail = fmt.Sprintf("%s→%s dropped", f.Target, link)
		}
		return n.cut(i, peers, in, !in)
	case "latency", "bandwidth", "timeout", "reset-peer":
		name := n.link()
		f.Target = name
		t := n.toxic(kind)
		f.Detail = t.String()
		if err := n.px.poison(name, t); err != nil {
			return nil, err
		}
		return func() error { n.px.cure(name); return nil }, nil
	}
	return nil, fmt.Errorf("unknown fault kind %q", kind)
}

// cut drops replica i's packets from (in) and to (out) peers.
func (n *nemesis) cut(i int, peers []string, in, out bool) (func() error, error) {
	node := n.replicas[i].name()
	if err := n.rig.partition(node, peers, in, out); err != nil {
		return nil, err
	}
	return func() error { return n.rig.heal(node) }, nil
}

// link picks a proxied link: a client link, or a replica's database link.
func (n *nemesis) link() string {
	var names []string
	for i := 1; i <= n.replicaCount(); i++ {
		names = append(names, clientProxy(i))
		if p := pgProxy(i); p != "" {
			names = append(names, p)
		}
	}
	return names[n.rng.IntN(len(names))]
}

// toxic draws the toxic of a proxy fault.
func (n *nemesis) toxic(kind string) toxic {
	switch kind {
	case "latency":
		return toxic{Type: "latency", Attributes: map[string]int{"latency": 50 + n.rng.IntN(151), "jitter": n.rng.IntN(51)}}
	case "bandwidth":
		return toxic{Type: "bandwidth", Attributes: map[string]int{"rate": 4 + n.rng.IntN(60)}}
	case "timeout":
		return toxic{Type: "timeout", Attributes: map[string]int{"timeout": 1000 + n.rng.IntN(4000)}}
	default:
		return toxic{Type: "reset_peer", Attributes: map[string]int{"timeout": n.rng.IntN(500)}}
	}
}

// leader returns the replica whose /metrics says it leads, or 0.
func (n *nemesis) leader() int {
	for i := 1; i <= n.replicaCount(); i++ {
		if metric(n.replicas[i], "hub_orchestrator_leader") == "1" {
			return i
		}
	}
	return 0
}

// metric returns the value of the sample named name in h's /metrics, "" if
// h does not answer.
func metric(h *replica, name string) string {
	client := &http.Client{Timeout: time.Second}
	resp, err := client.Get(h.httpBase() + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return v
		}
	}
	return ""
}

// run injects faults until ctx ends or until, after its last heal,
// endBy has passed; after each heal it runs converge.
func (n *nemesis) run(ctx context.Context, endBy time.Time, converge func() (time.Duration, error)) []*fault {
	var out []*fault
	for ctx.Err() == nil && time.Now().Before(endBy) {
		sleep(ctx, time.Duration(2000+n.rng.IntN(3000))*time.Millisecond)
		if ctx.Err() != nil || time.Now().After(endBy) {
			break
		}
		kind := n.kinds[n.rng.IntN(len(n.kinds))]
		hold := time.Duration(3000+n.rng.IntN(7000)) * time.Millisecond
		if kind == "leader-isolate" {
			hold += 10 * time.Second // long enough for another replica to take over
		}
		f := &fault{Kind: kind, Start: time.Now()}
		heal, err := n.inject(ctx, kind, f)
		if err != nil {
			n.logf("nemesis: %s: %v (skipped)", kind, err)
			continue
		}
		n.logf("nemesis: %s %s %s for %v", kind, f.Target, f.Detail, hold)
		if kind == "leader-isolate" {
			f.Failover = n.watchFailover(ctx, f.Target, hold)
		} else {
			sleep(ctx, hold)
		}
		if err := heal(); err != nil {
			f.ConvergeErr = "heal: " + err.Error()
			n.logf("nemesis: heal %s %s: %v", kind, f.Target, err)
		}
		f.Healed = time.Now()
		if f.ConvergeErr == "" {
			d, err := converge()
			f.Converge = d
			if err != nil {
				f.ConvergeErr = err.Error()
			}
			n.logf("nemesis: %s %s healed; converged in %v %v", kind, f.Target, d.Round(time.Millisecond), errText(err))
		}
		out = append(out, f)
	}
	return out
}

// watchFailover waits for hold and returns how long it took another
// replica than the isolated one to lead (0 if none did).
func (n *nemesis) watchFailover(ctx context.Context, isolated string, hold time.Duration) time.Duration {
	start := time.Now()
	var took time.Duration
	for time.Since(start) < hold && ctx.Err() == nil {
		if took == 0 {
			if i := n.leader(); i != 0 && n.replicas[i].name() != isolated {
				took = time.Since(start)
			}
		}
		sleep(ctx, 200*time.Millisecond)
	}
	return took
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "(" + err.Error() + ")"
}
