package hook

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hooklocal"
)

// slowHub answers an injection after a delay, as a hook sees a hub when
// the machine is loaded and the hook's process waits for a core: the
// hub's answer is there, late.
type slowHub struct {
	hubv1.UnimplementedAgentServiceServer
	delay time.Duration
}

func (s *slowHub) NoteHostEvent(context.Context, *hubv1.NoteHostEventRequest) (*hubv1.NoteHostEventResponse, error) {
	return &hubv1.NoteHostEventResponse{}, nil
}

func (s *slowHub) TakeInjection(ctx context.Context, _ *hubv1.TakeInjectionRequest) (*hubv1.TakeInjectionResponse, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &hubv1.TakeInjectionResponse{Messages: []*hubv1.Message{{Id: "m1", From: "ann", To: []string{"bob"}, Body: "mid-turn news"}}}, nil
}

func (s *slowHub) ConfirmDelivery(context.Context, *hubv1.ConfirmDeliveryRequest) (*hubv1.ConfirmDeliveryResponse, error) {
	return &hubv1.ConfirmDeliveryResponse{}, nil
}

// TestHookDefaultBudgetOutlastsALoadedMachine: with its default time-out a
// hook still injects what a hub answers 400 ms late (a hook run on a
// machine at load ~25 took 770 ms, and with a 170 ms budget gave up on a
// message posted between two tool calls, which reached the model only
// requests later).
func TestHookDefaultBudgetOutlastsALoadedMachine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hubv1.RegisterAgentServiceServer(srv, &slowHub{delay: 400 * time.Millisecond})
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)

	var stdout, stderr bytes.Buffer
	in := strings.NewReader(`{"session_id":"s1","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"echo two"}}`)
	Run(t.Context(), hooklocal.Hosts["gemini"], "AfterTool", in, &stdout, &stderr, hooklocal.Options{Addr: ln.Addr().String(), Token: "tok"})
	if !strings.Contains(stdout.String(), "mid-turn news") {
		t.Errorf("stdout = %q, stderr = %q: want the late answer injected", stdout.String(), stderr.String())
	}
}
