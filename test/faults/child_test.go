package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/jackc/pgx/v5"
)

// runConfig is what the test hands each run, which runs in a child
// process inside the clients' namespace.
type runConfig struct {
	Prefix   string
	Replicas int
	Agents   int
	Seed     uint64
	Duration time.Duration // of the faults; the run drains and checks after
	HubBin   string
	Dir      string // the run's files (logs, data dirs)
	Result   string // where the child writes its result
	Kinds    []string
}

// revokeBound is how long a revoked token may still be accepted by a
// replica: when the revocation's notification cannot reach it, the lease
// its auth cache takes from its listener's last word from the server
// (2 s), plus a call's round trip.
const revokeBound = 3 * time.Second

// convergeBound is how long the replicas may take to serve again after a
// fault heals.
const convergeBound = 60 * time.Second

// runChild is one run: PostgreSQL, the replicas, the proxy, the workload,
// the nemesis, then the checks. It runs inside the clients' namespace.
func runChild(t *testing.T, cfg runConfig) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration+10*time.Minute)
	defer cancel()
	logf := func(format string, args ...any) {
		fmt.Printf("%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	r := &rig{prefix: cfg.Prefix, replicas: cfg.Replicas}

	px := newProxies()
	t.Cleanup(px.stop)
	for i := 1; i <= cfg.Replicas; i++ {
		must(t, px.add(clientProxy(i), fmt.Sprintf("%s:%d", proxyAddr, clientPort(i)), fmt.Sprintf("%s:%d", replicaAddr(i), grpcPort)))
		if p := pgProxy(i); p != "" {
			must(t, px.add(p, fmt.Sprintf("%s:%d", proxyAddr, pgProxyPort(i)), fmt.Sprintf("%s:%d", pgAddr, pgPort)))
		}
	}

	pg, err := newPGCluster(r, filepath.Join(cfg.Dir, "pg"))
	must(t, err)
	must(t, pg.start(ctx))
	t.Cleanup(pg.stop)

	tokenFile := filepath.Join(cfg.Dir, "admin.token")
	adminToken := randomToken()
	must(t, os.WriteFile(tokenFile, []byte(adminToken+"\n"), 0o600))
	replicas := make([]*replica, cfg.Replicas+1)
	for i := 1; i <= cfg.Replicas; i++ {
		dbHost := fmt.Sprintf("%s:%d", pgAddr, pgPort)
		if pgProxy(i) != "" {
			dbHost = fmt.Sprintf("%s:%d", proxyAddr, pgProxyPort(i))
		}
		h := &replica{i: i, ns: r.ns(fmt.Sprintf("r%d", i)), addr: replicaAddr(i), logPath: filepath.Join(cfg.Dir, fmt.Sprintf("r%d.log", i))}
		h.args = []string{cfg.HubBin, "serve", "--data-dir", filepath.Join(cfg.Dir, h.name()), "--database-url", pg.url(dbHost),
			"--admin-token-file", tokenFile, "--grpc-addr", h.grpcTarget(), "--http-addr", fmt.Sprintf("%s:%d", h.addr, httpPort),
			"--insecure", "--tick-interval", "1s", "--rate-limit", "0", "--read-rate-limit", "0", "--log-level", "info"}
		must(t, os.MkdirAll(filepath.Join(cfg.Dir, h.name()), 0o700))
		replicas[i] = h
		must(t, h.start(ctx, 60*time.Second))
		t.Cleanup(h.stop)
	}
	admins := make([]hubv1.AdminServiceClient, cfg.Replicas+1)
	for i := 1; i <= cfg.Replicas; i++ {
		c, err := dialReplica(i)
		must(t, err)
		t.Cleanup(func() { c.Close() })
		admins[i] = hubv1.NewAdminServiceClient(c)
	}

	// The agents, the channel and the cron job.
	newAgentNamed := func(name string, useMCP bool) *agent {
		var tok string
		retry(t, ctx, "create agent "+name, func(c context.Context) error {
			cr, err := admins[1].CreateAgent(authed(c, adminToken), &hubv1.CreateAgentRequest{Name: name})
			tok = cr.GetToken()
			return err
		})
		a, err := newAgent(name, tok, cfg.Replicas, useMCP)
		must(t, err)
		t.Cleanup(a.close)
		return a
	}
	w := &workload{seed: cfg.Seed, replicas: replicas, hist: &history{}}
	var members []string
	for i := range cfg.Agents {
		a := newAgentNamed(fmt.Sprintf("w%d", i), i%3 == 2)
		retry(t, ctx, "join "+room, func(c context.Context) error {
			_, err := a.clients[1].JoinChannel(authed(c, a.token), &hubv1.JoinChannelRequest{Channel: room})
			return err
		})
		w.agents = append(w.agents, a)
		members = append(members, a.name)
	}
	newAgentNamed(cronSink, false)
	retry(t, ctx, "create the cron job", func(c context.Context) error {
		_, err := admins[1].CreateCronJob(authed(c, adminToken), &hubv1.CreateCronJobRequest{Job: &hubv1.CronJob{
			Name: "every2s", Kind: "every", EverySeconds: 2, Target: cronSink, Message: "cron", Enabled: true}})
		return err
	})
	pr := &prober{replicas: replicas, poster: newAgentNamed("probe-post", false), waiter: newAgentNamed("probe-wait", false)}

	// Observers, the workload and the nemesis.
	obsCtx, stopObs := context.WithCancel(ctx)
	tw := &tickWatch{}
	var obs sync.WaitGroup
	obs.Go(func() { tw.run(obsCtx, admins, adminToken, 250*time.Millisecond) })
	var revocations []*revocation
	obs.Go(func() {
		agentClients := make([]hubv1.AgentServiceClient, cfg.Replicas+1)
		for i := 1; i <= cfg.Replicas; i++ {
			agentClients[i] = pr.poster.clients[i]
		}
		for k := 0; obsCtx.Err() == nil; k++ {
			sleep(obsCtx, 6*time.Second)
			if obsCtx.Err() != nil {
				return
			}
			rv, err := revoke(obsCtx, admins, adminToken, agentClients, fmt.Sprintf("rv-%d", k), 1+k%cfg.Replicas, 6*time.Second)
			if err == nil {
				revocations = append(revocations, rv)
			}
		}
	})
	w.start()
	n := &nemesis{rng: mrand.New(mrand.NewPCG(cfg.Seed, 0x6e656d65)), rig: r, pg: pg, replicas: replicas, px: px, kinds: cfg.Kinds, logf: logf}
	faults := n.run(ctx, time.Now().Add(cfg.Duration), func() (time.Duration, error) {
		d, err := pr.converge(ctx, convergeBound)
		if err == nil && pr.last != nil {
			logf("  (until then: %v)", pr.last)
		}
		return d, err
	})
	// Everything is healed: the replicas must serve, then the workload
	// stops and the readers catch up.
	if _, err := pr.converge(ctx, convergeBound); err != nil {
		t.Errorf("after the last fault: %v", err)
	}
	w.stop(90 * time.Second)
	stopObs()
	obs.Wait()

	store, err := readStore(ctx, pg, members)
	must(t, err)
	res := check(checkInput{ops: w.hist.all(), store: store, members: members, ticks: tw.all(), tickErrors: tickErrors(replicas),
		revocations: revocations, revokeBound: revokeBound, faults: faults})
	res.Seed = cfg.Seed
	b, err := json.Marshal(res)
	must(t, err)
	must(t, os.WriteFile(cfg.Result, b, 0o644))
}

// readStore reads, straight from PostgreSQL, what the checker compares
// the history with.
func readStore(ctx context.Context, pg *pgCluster, members []string) (storeView, error) {
	v := storeView{byNonce: map[string][]int64{}, deliveries: map[string]map[int64]bool{}}
	conn, err := pgx.Connect(ctx, pg.url(fmt.Sprintf("%s:%d", pgAddr, pgPort)))
	if err != nil {
		return v, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT id, body FROM messages WHERE sender = ANY($1) ORDER BY id`, members)
	if err != nil {
		return v, err
	}
	for rows.Next() {
		var id int64
		var body string
		if err := rows.Scan(&id, &body); err != nil {
			return v, err
		}
		nonce, _, _ := strings.Cut(body, " ")
		v.byNonce[nonce] = append(v.byNonce[nonce], id)
	}
	if err := rows.Err(); err != nil {
		return v, err
	}
	rows, err = conn.Query(ctx, `SELECT a.name, d.message_id FROM deliveries d JOIN agents a ON a.id = d.agent_id WHERE a.name = ANY($1)`, members)
	if err != nil {
		return v, err
	}
	for rows.Next() {
		var name string
		var id int64
		if err := rows.Scan(&name, &id); err != nil {
			return v, err
		}
		if v.deliveries[name] == nil {
			v.deliveries[name] = map[int64]bool{}
		}
		v.deliveries[name][id] = true
	}
	if err := rows.Err(); err != nil {
		return v, err
	}
	rows, err = conn.Query(ctx, `SELECT job_name, scheduled_at, status FROM cron_runs WHERE NOT manual`)
	if err != nil {
		return v, err
	}
	for rows.Next() {
		var c cronRun
		var st string
		if err := rows.Scan(&c.Job, &c.ScheduledAt, &st); err != nil {
			return v, err
		}
		c.OK = st == "ok"
		v.cronRuns = append(v.cronRuns, c)
	}
	if err := rows.Err(); err != nil {
		return v, err
	}
	err = conn.QueryRow(ctx, `SELECT COUNT(*) FROM deliveries d JOIN agents a ON a.id = d.agent_id JOIN messages m ON m.id = d.message_id
		WHERE a.name = $1 AND m.kind = 'cron'`, cronSink).Scan(&v.cronMsgs)
	return v, err
}

// retry calls fn until it succeeds (each call with 5 s), failing the test
// after a minute.
func retry(t *testing.T, ctx context.Context, what string, fn func(context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := fn(c)
		cancel()
		if err == nil {
			return
		}
		if o, _ := classify(err); o == failed || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}
