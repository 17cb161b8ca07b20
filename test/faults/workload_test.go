package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
)

// The workload: agents that post direct, channel and mention messages
// through every replica (some over /mcp), follow their own cursor with
// WaitForMessages on every replica in turn, acknowledge what asks for it,
// heartbeat, and take and release exclusive reservations of a few shared
// paths. Every call goes in the history with its client-side times and
// outcome.

const (
	room        = "#room"     // every workload agent is a member
	cronSink    = "cron-sink" // the cron job's target; it never reads
	postTimeout = 10 * time.Second
	// postSettle is how long after the last poster returned a post its
	// client gave up on may still commit on its replica: the readers'
	// catching up counts only waits that started after it.
	postSettle  = 2 * time.Second
	waitSeconds = 2
	areas       = 3 // reservable paths area/0 … area/2
)

// agent is one workload agent with a connection to each replica.
type agent struct {
	name, token string
	mcp         bool // posts and waits over /mcp instead of gRPC
	clients     []hubv1.AgentServiceClient
	conns       []*grpc.ClientConn

	mu       sync.Mutex
	sessions []*mcp.ClientSession // per replica, opened on first use
}

// dialReplica dials replica i through the fault proxy.
func dialReplica(i int) (*grpc.ClientConn, error) {
	bo := backoff.DefaultConfig
	bo.BaseDelay, bo.MaxDelay = 100*time.Millisecond, 2*time.Second
	return grpc.NewClient(fmt.Sprintf("%s:%d", proxyAddr, clientPort(i)),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bo, MinConnectTimeout: 3 * time.Second}),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 3 * time.Second, PermitWithoutStream: true}))
}

func authed(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

func newAgent(name, token string, replicas int, useMCP bool) (*agent, error) {
	a := &agent{name: name, token: token, mcp: useMCP, sessions: make([]*mcp.ClientSession, replicas+1)}
	a.clients = make([]hubv1.AgentServiceClient, replicas+1)
	for i := 1; i <= replicas; i++ {
		c, err := dialReplica(i)
		if err != nil {
			return nil, err
		}
		a.conns = append(a.conns, c)
		a.clients[i] = hubv1.NewAgentServiceClient(c)
	}
	return a, nil
}

func (a *agent) close() {
	for _, c := range a.conns {
		c.Close()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		if s != nil {
			s.Close()
		}
	}
}

// bearer adds a token to every request of an HTTP client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// callTool calls an MCP tool on replica i's /mcp (a session per replica,
// opened again after any protocol error: a restarted replica forgot it)
// and decodes its structured result into out.
func (a *agent) callTool(ctx context.Context, w *workload, i int, name string, args map[string]any, out any) error {
	a.mu.Lock()
	s := a.sessions[i]
	a.mu.Unlock()
	if s == nil {
		client := &http.Client{Transport: bearer{a.token}}
		var err error
		s, err = mcp.NewClient(&mcp.Implementation{Name: "faults-" + a.name}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: w.replicas[i].httpBase() + "/mcp", HTTPClient: client, MaxRetries: -1}, nil)
		if err != nil {
			return fmt.Errorf("mcp connect: %w", err)
		}
		a.mu.Lock()
		a.sessions[i] = s
		a.mu.Unlock()
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.Close()
		a.mu.Lock()
		if a.sessions[i] == s {
			a.sessions[i] = nil
		}
		a.mu.Unlock()
		return fmt.Errorf("mcp %s: %w", name, err)
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		return mcpError(strings.Join(text, " "))
	}
	b, _ := json.Marshal(res.StructuredContent)
	return json.Unmarshal(b, out)
}

// workload drives the agents of one run.
type workload struct {
	seed     uint64
	replicas []*replica // 1-based
	agents   []*agent
	hist     *history
	stopPost chan struct{} // closed: posters stop
	settled  chan struct{} // closed: every post has returned and settled
	drainBy  time.Time     // readers stop by then once posters stopped
	wg       sync.WaitGroup
	readers  sync.WaitGroup
}

func (w *workload) n() int { return len(w.replicas) - 1 }

// start runs a poster per agent and replica (a client of that replica:
// a replica that cannot answer holds up its own clients only) and a
// reader per agent.
func (w *workload) start() {
	w.stopPost, w.settled = make(chan struct{}), make(chan struct{})
	for i, a := range w.agents {
		for r := 1; r <= w.n(); r++ {
			rng := rand.New(rand.NewPCG(w.seed, uint64(100*i+r)))
			w.wg.Add(1)
			go func() { defer w.wg.Done(); w.poster(a, i, r, rng) }()
		}
		w.readers.Add(1)
		rrng := rand.New(rand.NewPCG(w.seed, uint64(1000+i)))
		go func() { defer w.readers.Done(); w.reader(a, rrng) }()
	}
}

// stop ends the posters, then lets the readers catch up with every post
// until they find nothing new twice in a row once the posts settled (or
// by drain).
func (w *workload) stop(drain time.Duration) {
	w.drainBy = time.Now().Add(drain)
	close(w.stopPost)
	w.wg.Wait()
	time.Sleep(postSettle)
	close(w.settled)
	w.readers.Wait()
}

// hasSettled reports whether every post has returned and settled.
func (w *workload) hasSettled() bool {
	select {
	case <-w.settled:
		return true
	default:
		return false
	}
}

func (w *workload) stopped() bool {
	select {
	case <-w.stopPost:
		return true
	default:
		return false
	}
}

// poster posts through replica r until stopped; every 10th post is
// followed by a heartbeat; the poster of the first replica also takes,
// holds and releases a reservation after every 15th (through any replica:
// an agent's reservations are its own, so one of its goroutines takes
// them, as one agent would).
func (w *workload) poster(a *agent, idx, r int, rng *rand.Rand) {
	for seq := 0; !w.stopped(); seq++ {
		w.post(a, idx, r, seq, rng)
		if seq%10 == 9 {
			w.heartbeat(a, rng)
		}
		if seq%15 == 7 && r == 1 {
			w.reserve(a, rng)
		}
		time.Sleep(time.Duration(50+rng.IntN(200)) * time.Millisecond)
	}
}

// others returns k distinct workload agents other than a.
func (w *workload) others(a *agent, k int, rng *rand.Rand) []string {
	var out []string
	for _, i := range rng.Perm(len(w.agents)) {
		if b := w.agents[i]; b != a && len(out) < k {
			out = append(out, b.name)
		}
	}
	return out
}

func (w *workload) post(a *agent, idx, r, seq int, rng *rand.Rand) {
	o := &op{Kind: "post", Agent: a.name, Replica: r, Via: "grpc",
		Nonce: fmt.Sprintf("n%d.%d.%d.%d", w.seed, idx, r, seq), High: rng.IntN(10) == 0, Ack: rng.IntN(8) == 0}
	body := o.Nonce
	switch k := rng.IntN(10); {
	case k < 5: // direct
		o.To = w.others(a, 1+rng.IntN(2), rng)
	case k < 8: // channel
		o.Channel = room
	default: // direct to one, mentioning another
		two := w.others(a, 2, rng)
		o.To, o.Mentions = two[:1], two[1:]
		body += " cc @" + two[1]
	}
	prio := hubv1.Priority_PRIORITY_UNSPECIFIED
	if o.High {
		prio = hubv1.Priority_PRIORITY_HIGH
	}
	ctx, cancel := context.WithTimeout(context.Background(), postTimeout)
	defer cancel()
	o.Start = time.Now()
	var id string
	var err error
	if a.mcp {
		o.Via = "mcp"
		args := map[string]any{"body": body, "ack": o.Ack}
		if len(o.To) > 0 {
			args["to"] = o.To
		}
		if o.Channel != "" {
			args["channel"] = o.Channel
		}
		if o.High {
			args["priority"] = "high"
		}
		var out struct{ ID string }
		err = a.callTool(ctx, w, o.Replica, "post_message", args, &out)
		id = out.ID
	} else {
		var r *hubv1.PostMessageResponse
		r, err = a.clients[o.Replica].PostMessage(authed(ctx, a.token), &hubv1.PostMessageRequest{
			To: o.To, Channel: o.Channel, Body: body, Priority: prio, AckRequired: o.Ack})
		id = r.GetMessage().GetId()
	}
	finish(o, err)
	if o.Outcome == ok {
		o.ID, _ = strconv.ParseInt(id, 10, 64)
	}
	w.hist.add(o)
}

func (w *workload) heartbeat(a *agent, rng *rand.Rand) {
	o := &op{Kind: "heartbeat", Agent: a.name, Replica: 1 + rng.IntN(w.n()), Via: "grpc"}
	ctx, cancel := context.WithTimeout(context.Background(), postTimeout)
	defer cancel()
	o.Start = time.Now()
	_, err := a.clients[o.Replica].Heartbeat(authed(ctx, a.token), &hubv1.HeartbeatRequest{})
	finish(o, err)
	w.hist.add(o)
}

// reserve takes an exclusive reservation of one of the shared areas; if
// granted, it holds it a moment and releases it.
func (w *workload) reserve(a *agent, rng *rand.Rand) {
	o := &op{Kind: "reserve", Agent: a.name, Replica: 1 + rng.IntN(w.n()), Via: "grpc", Pattern: fmt.Sprintf("area/%d", rng.IntN(areas))}
	ctx, cancel := context.WithTimeout(context.Background(), postTimeout)
	defer cancel()
	o.Start = time.Now()
	r, err := a.clients[o.Replica].ReservePaths(authed(ctx, a.token), &hubv1.ReservePathsRequest{
		Paths: []string{o.Pattern}, Mode: "exclusive", TtlSeconds: 10, Reason: "faults"})
	finish(o, err)
	if o.Outcome == ok {
		o.Granted = true
		for _, c := range r.GetConflicts() {
			if c.GetRefusing() {
				o.Granted = false
			}
		}
		for _, res := range r.GetReservations() {
			if strings.TrimSuffix(res.GetPattern(), "/") == o.Pattern {
				o.ResID, o.Expires = res.GetId(), res.GetExpiresAt().AsTime()
			}
		}
		o.Granted = o.Granted && o.ResID != ""
	}
	w.hist.add(o)
	if !o.Granted {
		return
	}
	time.Sleep(time.Duration(100+rng.IntN(700)) * time.Millisecond)
	rel := &op{Kind: "release", Agent: a.name, Replica: 1 + rng.IntN(w.n()), Via: "grpc", Pattern: o.Pattern, ResID: o.ResID}
	ctx2, cancel2 := context.WithTimeout(context.Background(), postTimeout)
	defer cancel2()
	rel.Start = time.Now()
	rr, err := a.clients[rel.Replica].ReleasePaths(authed(ctx2, a.token), &hubv1.ReleasePathsRequest{Ids: []string{o.ResID}})
	finish(rel, err)
	for _, res := range rr.GetReleased() {
		rel.Released = append(rel.Released, res.GetId())
	}
	w.hist.add(rel)
}

// reader follows a's cursor with waits on every replica in turn until
// the posts settled and it found nothing new twice in a row. A wait that
// started before the posts settled does not count as caught up: a post in
// flight then (slow under faults, up to postTimeout) may commit after it.
func (w *workload) reader(a *agent, rng *rand.Rand) {
	var cursor int64
	empty := 0
	for {
		if w.stopped() && (empty >= 2 || time.Now().After(w.drainBy)) {
			return
		}
		settled := w.hasSettled()
		o := w.wait(a, 1+rng.IntN(w.n()), cursor)
		if o.Outcome != ok {
			empty = 0
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if len(o.IDs) == 0 && settled {
			empty++
		} else {
			empty = 0
		}
		if o.Cursor > 0 {
			cursor = o.Cursor
		}
		if acks := w.toAck(o); len(acks) > 0 {
			w.ack(a, 1+rng.IntN(w.n()), acks)
		}
	}
}

// toAck returns the IDs of a wait's messages that ask for an
// acknowledgement (posts by the workload with Ack set).
func (w *workload) toAck(o *op) []string {
	var ids []string
	for i, id := range o.IDs {
		if i < len(o.Acks) && o.Acks[i] {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
	}
	return ids
}

func (w *workload) wait(a *agent, i int, cursor int64) *op {
	o := &op{Kind: "wait", Agent: a.name, Replica: i, Via: "grpc", After: cursor}
	ctx, cancel := context.WithTimeout(context.Background(), (waitSeconds+10)*time.Second)
	defer cancel()
	o.Start = time.Now()
	if a.mcp {
		o.Via = "mcp"
		var out struct {
			Cursor   string
			Messages []struct {
				ID          string
				Priority    string
				AckRequired bool `json:"ack_required"`
			}
		}
		err := a.callTool(ctx, w, i, "wait_for_messages", map[string]any{
			"timeout_seconds": waitSeconds, "after": strconv.FormatInt(cursor, 10), "limit": 100}, &out)
		finish(o, err)
		if err == nil {
			for _, m := range out.Messages {
				id, _ := strconv.ParseInt(m.ID, 10, 64)
				o.IDs, o.Highs, o.Acks = append(o.IDs, id), append(o.Highs, m.Priority == "high"), append(o.Acks, m.AckRequired)
			}
			o.Cursor, _ = strconv.ParseInt(out.Cursor, 10, 64)
		}
	} else {
		secs := int32(waitSeconds)
		r, err := a.clients[i].WaitForMessages(authed(ctx, a.token), &hubv1.WaitForMessagesRequest{
			TimeoutSeconds: &secs, AfterId: strconv.FormatInt(cursor, 10), Limit: 100})
		finish(o, err)
		if err == nil {
			for _, m := range r.GetMessages() {
				id, _ := strconv.ParseInt(m.GetId(), 10, 64)
				o.IDs = append(o.IDs, id)
				o.Highs = append(o.Highs, m.GetPriority() == hubv1.Priority_PRIORITY_HIGH)
				o.Acks = append(o.Acks, m.GetAckRequired())
			}
			o.Cursor, _ = strconv.ParseInt(r.GetCursor(), 10, 64)
		}
	}
	w.hist.add(o)
	return o
}

func (w *workload) ack(a *agent, i int, ids []string) {
	o := &op{Kind: "ack", Agent: a.name, Replica: i, Via: "grpc"}
	ctx, cancel := context.WithTimeout(context.Background(), postTimeout)
	defer cancel()
	o.Start = time.Now()
	_, err := a.clients[i].AcknowledgeMessage(authed(ctx, a.token), &hubv1.AcknowledgeMessageRequest{Ids: ids})
	finish(o, err)
	w.hist.add(o)
}
