package app_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// The dashboard's stream on a real hub: a REST post to an agent announces
// "messages" (the notifier that wakes waits), an agent's write call
// announces "agents", and stopping the hub ends the stream at once instead
// of holding the shutdown up.
func TestDashboardStream(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	tok := h.newAgent(t, "watched")

	if code, body, _ := h.do(t, "GET", "/", "", ""); code != 200 || !strings.Contains(body, "Admin token") {
		t.Fatalf("GET / = %d", code)
	}
	req, _ := http.NewRequest("GET", h.base+"/v1/admin/stream", nil)
	req.Header.Set("Authorization", "Bearer "+tok) // an agent token is not the admin token
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("stream with an agent token: %d, want 401", res.StatusCode)
	}

	req.Header.Set("Authorization", "Bearer "+h.token)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	waitFor := func(topic string) {
		t.Helper()
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, "data: ") && strings.Contains(l, `"`+topic+`"`) {
				return
			}
		}
		t.Fatalf("stream ended before %q: %v", topic, lines.Err())
	}
	waitFor("version") // hello

	if code, body, _ := h.do(t, "POST", "/v1/admin/messages", h.token, `{"to":["watched"],"body":"hello"}`); code != 200 {
		t.Fatalf("post: %d %s", code, body)
	}
	waitFor("messages")
	if _, err := h.agent.Checkpoint(coreBearer(tok), &hubv1.CheckpointRequest{CurrentActivity: "reading"}); err != nil {
		t.Fatal(err)
	}
	waitFor("agents")

	closed := make(chan error, 1)
	go func() { closed <- h.m.Close() }()
	for lines.Scan() {
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return with a stream open")
	}
	if n := h.m.Service.Feed().Count(); n != 0 {
		t.Errorf("subscribers after Close: %d", n)
	}
}
