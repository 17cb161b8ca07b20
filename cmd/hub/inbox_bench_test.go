package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"

	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
)

// BenchmarkInboxApproval measures a person's side of a permission prompt
// on loopback, as the dashboard sees it: from the start of the real
// `hub hook claude PermissionRequest` process to the approval in the
// inbox list the page reads when the live stream announces "inbox"
// (hook → visible), and from the person's answer (the REST call the
// page's Allow button makes) to the hook process's exit with the decision
// (answer → hook returns). Both include process start and exit; between
// runs the page idles past the stream's merge gap (200 ms). Goal: p50
// ≤ 100 ms each.
//
//	go test -run '^$' -bench BenchmarkInboxApproval -benchtime 100x ./cmd/hub/
func BenchmarkInboxApproval(b *testing.B) {
	m := app.NewMain()
	m.DataDir = b.TempDir()
	m.GRPCAddr, m.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	m.NoOrchestrator = true
	m.Logger = slog.New(slog.DiscardHandler)
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	adminTok, err := m.AdminToken()
	if err != nil {
		b.Fatal(err)
	}
	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminTok)
	r, err := hubv1.NewAdminServiceClient(m.Conn()).CreateAgent(actx, &hubv1.CreateAgentRequest{Name: "ann"})
	if err != nil {
		b.Fatal(err)
	}
	payload, err := os.ReadFile(filepath.Join("testdata", "hooks", "claude-PermissionRequest.json"))
	if err != nil {
		b.Fatal(err)
	}
	base := "http://" + m.HTTPAddress()
	rest := func(method, path string, body any, out any) {
		var rd *bytes.Reader
		if body != nil {
			j, _ := json.Marshal(body)
			rd = bytes.NewReader(j)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+adminTok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s %s: %s", method, path, res.Status)
		}
		if out != nil {
			if err := json.NewDecoder(res.Body).Decode(out); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The page's live stream: each "inbox" change is announced here.
	req, _ := http.NewRequest("GET", base+"/v1/admin/stream", nil)
	req.Header.Set("Authorization", "Bearer "+adminTok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { res.Body.Close() })
	changes := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data:") && strings.Contains(line, "inbox") {
				changes <- line
			}
		}
	}()
	type list struct {
		Items []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"items"`
	}
	bin := builtHub(b)
	var visible, answered []time.Duration
	for b.Loop() {
		// A person's items do not come every few milliseconds: let the
		// stream's merge gap after the last answer pass (untimed), so each
		// run measures a page that was idle.
		b.StopTimer()
		time.Sleep(300 * time.Millisecond)
		for len(changes) > 0 {
			<-changes
		}
		b.StartTimer()
		cmd := exec.Command(bin, "hook", "claude", "PermissionRequest", "--approval-wait", "30s")
		cmd.Env = append(os.Environ(), "HUB_ADDR="+m.GRPCAddress(), "HUB_TOKEN="+r.GetToken(), "HUB_TOKEN_FILE=")
		cmd.Stdin = bytes.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var id string
		for id == "" {
			select {
			case <-changes:
			case <-time.After(10 * time.Second):
				b.Fatal("no inbox change announced within 10 s")
			}
			var l list
			rest("GET", "/v1/admin/inbox?state=open", nil, &l)
			if len(l.Items) > 0 {
				id = l.Items[0].ID
			}
		}
		visible = append(visible, time.Since(start))
		t := time.Now()
		rest("POST", "/v1/admin/inbox/"+id+":answer", map[string]string{"decision": "allow"}, nil)
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		answered = append(answered, time.Since(t))
		if !strings.Contains(out.String(), `"behavior":"allow"`) {
			b.Fatalf("hook printed %q", out.String())
		}
	}
	report := func(name string, ds []time.Duration) {
		slices.Sort(ds)
		pct := func(p float64) float64 {
			return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
		}
		b.ReportMetric(pct(0.50), name+"-p50-ms")
		b.ReportMetric(pct(0.99), name+"-p99-ms")
	}
	report("visible", visible)
	report("answer", answered)
}
