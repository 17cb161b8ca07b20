package app_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Revoking a principal ends everything it holds open within a second, over
// real gRPC and HTTP on loopback: an agent's parked wait, next_task and
// approval when its token is revoked, a person's dashboard stream when the
// person is revoked. An agent parks at most four calls on inbox items.
func TestRevocationEndsParksAndStreams(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	const promptly = time.Second

	annTok := h.newAgent(t, "ann")
	ann := coreBearer(annTok)
	type ended struct {
		what string
		at   time.Time
		err  error
	}
	done := make(chan ended, 8)
	park := func(what string, call func() error) {
		go func() { err := call(); done <- ended{what, time.Now(), err} }()
	}
	park("wait", func() error {
		_, err := h.agent.WaitForMessages(ann, &hubv1.WaitForMessagesRequest{TimeoutSeconds: ptr(int32(60))})
		return err
	})
	park("next_task", func() error {
		_, err := h.agent.NextTask(ann, &hubv1.NextTaskRequest{WaitSeconds: 60})
		return err
	})
	for i := range 4 {
		park("approval", func() error {
			_, err := h.agent.RequestApproval(ann, &hubv1.RequestApprovalRequest{Tool: "Bash", Input: `{"command":"ls ` + string(rune('a'+i)) + `"}`, WaitSeconds: 60})
			return err
		})
	}
	within(t, "bob's four approvals open", func() bool {
		r, err := h.admin.ListInbox(h.adm, &hubv1.ListInboxRequest{State: "open"})
		return err == nil && len(r.GetItems()) == 4
	})
	time.Sleep(200 * time.Millisecond) // parked past their first look
	_, err := h.agent.RequestApproval(ann, &hubv1.RequestApprovalRequest{Tool: "Bash", Input: `{"command":"ls z"}`, WaitSeconds: 60})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a fifth approval parked at once: %v, want ResourceExhausted", err)
	}

	revoked := time.Now()
	if _, err := h.admin.RevokeToken(h.adm, &hubv1.RevokeTokenRequest{Name: "ann"}); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		select {
		case e := <-done:
			d := e.at.Sub(revoked)
			if d > promptly {
				t.Errorf("%s ended %s after the revocation, want within %s", e.what, d, promptly)
			}
			t.Logf("%s ended %s after the revocation (%v)", e.what, d.Round(time.Millisecond), status.Code(e.err))
		case <-time.After(5 * time.Second):
			t.Fatalf("a parked call of ann outlived her revocation by 5 s")
		}
	}

	p, err := h.admin.CreatePerson(h.adm, &hubv1.CreatePersonRequest{Name: "pat"})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", h.base+"/v1/admin/stream", nil)
	req.Header.Set("Authorization", "Bearer "+p.GetToken())
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("pat's stream: %v, %v", res, err)
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "data: ") {
	}
	streamEnded := make(chan time.Time, 1)
	go func() {
		io.Copy(io.Discard, res.Body) // events until the stream ends
		streamEnded <- time.Now()
	}()
	revoked = time.Now()
	if code, body, _ := h.do(t, "POST", "/v1/admin/people/pat:revoke", h.token, "{}"); code != 200 {
		t.Fatalf("revoke pat: %d %s", code, body)
	}
	// Changes go on: the revoked person's stream must not carry them.
	h.do(t, "POST", "/v1/admin/messages", h.token, `{"to":["ann"],"body":"still here"}`)
	select {
	case at := <-streamEnded:
		d := at.Sub(revoked)
		if d > promptly {
			t.Errorf("pat's stream ended %s after the revocation, want within %s", d, promptly)
		}
		t.Logf("pat's stream ended %s after the revocation", d.Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("pat's stream outlived the revocation by 5 s")
	}
}

func ptr[T any](v T) *T { return &v }
