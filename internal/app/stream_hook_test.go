package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/hub"
)

// syncBuffer is a log the hub writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hookStream opens token's watch stream, as hub mcp holds it, and checks
// that its first frame lists the hook's calls among those it takes.
func hookStream(t *testing.T, c hubv1.AgentServiceClient, token string) wakeStream {
	t.Helper()
	ctx, cancel := context.WithCancel(coreBearer(token))
	t.Cleanup(cancel)
	st, err := openStream(ctx, c, &hubv1.SubscribeRequest{Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil {
		t.Fatalf("first frame: %v", err)
	}
	if !first.GetCalls() || !slices.Contains(first.GetMoreCalls(), "take_injection") || !slices.Contains(first.GetMoreCalls(), "confirm_delivery") {
		t.Fatalf("first frame = %v, want calls set and more_calls naming take_injection and confirm_delivery", first)
	}
	return st
}

// A hook's injection carried by the stream (a bridge answering its
// agent's hook) is TakeInjection: it hands out what is new once, the hook
// path is seen, and its confirmation marks the messages IN_CONTEXT via
// hook. Each carried call is counted in hub_rpcs_total under its own name
// (and in hub_stream_calls_total) and logged as the call alone, via=stream.
func TestSubscribeCarriesHookInjections(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	m := relHub(t, func(m *app.Main) {
		m.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	h := &coreHub{m: m, token: adminTok, admin: hubv1.NewAdminServiceClient(conn), agent: hubv1.NewAgentServiceClient(conn), adm: coreBearer(adminTok), base: "http://" + m.HTTPAddress()}
	alice, bob := h.newAgent(t, "alice"), h.newAgent(t, "bob")
	st := hookStream(t, h.agent, alice)
	posted := postN(t, h.agent, bob, 2, "hello")

	inj := callOn(t, st, &hubv1.StreamCall{Id: 1, Call: &hubv1.StreamCall_TakeInjection{TakeInjection: &hubv1.TakeInjectionRequest{}}}).GetTakeInjection()
	if messageIDs(inj.GetMessages()) != strings.Join(posted, ",") || inj.GetCursor() != posted[1] {
		t.Fatalf("the injection on the stream = %v, want %v with the cursor at the last", inj, posted)
	}
	if rc := receipt(t, h.agent, bob, posted[0]); rc.GetState() != string(hub.StateQueued) {
		t.Fatalf("the receipt of %s before the hook's confirmation = %v, want QUEUED (delivered, not in context)", posted[0], rc)
	}
	if again := callOn(t, st, &hubv1.StreamCall{Id: 2, Call: &hubv1.StreamCall_TakeInjection{TakeInjection: &hubv1.TakeInjectionRequest{}}}).GetTakeInjection(); again == nil || len(again.GetMessages()) != 0 {
		t.Fatalf("a second injection = %v, want nothing: the first took them", again)
	}
	if r := callOn(t, st, &hubv1.StreamCall{Id: 3, Call: &hubv1.StreamCall_ConfirmDelivery{ConfirmDelivery: &hubv1.ConfirmDeliveryRequest{Ids: posted, Via: "hook"}}}); r.GetConfirmDelivery() == nil {
		t.Fatalf("the confirmation on the stream = %v, want its reply", r)
	}
	for _, id := range posted {
		within(t, "the receipt of "+id+" IN_CONTEXT via hook", func() bool {
			rc := receipt(t, h.agent, bob, id)
			return rc.GetState() == string(hub.StateInContext) && rc.GetVia() == "hook"
		})
	}
	// The hook path is seen, as when the hook calls.
	if _, raw, _ := h.do(t, "GET", "/v1/admin/agents/alice", h.token, ""); !strings.Contains(raw, `"kind":"hook"`) || !strings.Contains(raw, `"reachable":true`) {
		t.Errorf("the admin's view of alice: %s; want reachable by a live hook path", raw)
	}

	_, metrics, _ := h.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{
		`hub_rpcs_total{code="OK",method="TakeInjection",service="AgentService"} 2`,
		`hub_stream_calls_total{code="OK",method="TakeInjection",service="AgentService"} 2`,
		`hub_rpcs_total{code="OK",method="ConfirmDelivery",service="AgentService"} 1`,
		`hub_stream_calls_total{code="OK",method="ConfirmDelivery",service="AgentService"} 1`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics has no line %q", want)
		}
	}
	var logged int
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "method=/hub.v1.AgentService/TakeInjection") && strings.Contains(line, "code=OK") &&
			strings.Contains(line, "agent=alice") && strings.Contains(line, "via=stream") && strings.Contains(line, "request_id=") {
			logged++
		}
	}
	if logged != 2 {
		t.Errorf("the log has %d lines of alice's TakeInjection via=stream, want 2:\n%s", logged, log.String())
	}
}

// A hook's call on the stream that fails answers with the error the call
// alone ends with, and the stream goes on: bad input, an ID not delivered,
// a budget spent.
func TestSubscribeHookCallErrors(t *testing.T) {
	t.Parallel()
	m := relHub(t, func(m *app.Main) { m.RateLimit = admission.RateLimit{PerSecond: 0.001, Burst: 6} })
	alice := relCreateAgent(t, m, "alice")
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := hubv1.NewAgentServiceClient(conn)
	st := hookStream(t, c, alice)
	for i, tc := range []struct {
		call  *hubv1.StreamCall
		alone func() error
		code  codes.Code
	}{
		{
			&hubv1.StreamCall{Call: &hubv1.StreamCall_TakeInjection{TakeInjection: &hubv1.TakeInjectionRequest{Limit: -1}}},
			func() error {
				_, err := c.TakeInjection(coreBearer(alice), &hubv1.TakeInjectionRequest{Limit: -1})
				return err
			},
			codes.InvalidArgument,
		},
		{
			&hubv1.StreamCall{Call: &hubv1.StreamCall_ConfirmDelivery{ConfirmDelivery: &hubv1.ConfirmDeliveryRequest{Ids: []string{"999"}, Via: "hook"}}},
			func() error {
				_, err := c.ConfirmDelivery(coreBearer(alice), &hubv1.ConfirmDeliveryRequest{Ids: []string{"999"}, Via: "hook"})
				return err
			},
			codes.NotFound,
		},
		{
			&hubv1.StreamCall{Call: &hubv1.StreamCall_ConfirmDelivery{ConfirmDelivery: &hubv1.ConfirmDeliveryRequest{Ids: []string{"1"}, Via: "pigeon"}}},
			func() error {
				_, err := c.ConfirmDelivery(coreBearer(alice), &hubv1.ConfirmDeliveryRequest{Ids: []string{"1"}, Via: "pigeon"})
				return err
			},
			codes.InvalidArgument,
		},
	} {
		tc.call.Id = uint64(i + 1)
		got := callOn(t, st, tc.call).GetError()
		alone := tc.alone()
		if codes.Code(got.GetCode()) != tc.code || !strings.Contains(alone.Error(), got.GetMessage()) {
			t.Errorf("%v on the stream: %v; want %v as alone: %v", tc.call, got, tc.code, alone)
		}
	}
	// The write budget (6 at once) is spent by the six calls above: the
	// next is refused as the call alone is.
	r := callOn(t, st, &hubv1.StreamCall{Id: 9, Call: &hubv1.StreamCall_TakeInjection{TakeInjection: &hubv1.TakeInjectionRequest{}}})
	if codes.Code(r.GetError().GetCode()) != codes.ResourceExhausted {
		t.Fatalf("an injection past the write budget = %v, want ResourceExhausted", r)
	}
	if hb := callOn(t, st, &hubv1.StreamCall{Id: 10, Call: &hubv1.StreamCall_Heartbeat{Heartbeat: &hubv1.HeartbeatRequest{}}}); hb.GetError() != nil && codes.Code(hb.GetError().GetCode()) != codes.ResourceExhausted {
		t.Fatalf("the stream after the errors: %v", hb)
	}
}
