package app_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/hub"
	_ "github.com/mattn/go-sqlite3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// relHub boots a hub on loopback port 0 with a temporary data dir and no
// orchestrator; mod adjusts the Main before Start.
func relHub(tb testing.TB, mod func(*app.Main)) *app.Main {
	tb.Helper()
	m := app.NewMain()
	m.DataDir = tb.TempDir()
	m.GRPCAddr = "127.0.0.1:0"
	m.HTTPAddr = "127.0.0.1:0"
	m.Logger = slog.New(slog.DiscardHandler)
	m.NoOrchestrator = true
	if mod != nil {
		mod(m)
	}
	if err := m.Start(context.Background()); err != nil {
		tb.Fatalf("start hub: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// relDial dials the hub's gRPC port in plaintext.
func relDial(t *testing.T, m *app.Main) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func relAdminToken(tb testing.TB, m *app.Main) string {
	tb.Helper()
	tok, err := m.AdminToken()
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func bearer(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// relCreateAgent creates an agent over the in-process connection and
// returns its token.
func relCreateAgent(tb testing.TB, m *app.Main, name string) string {
	tb.Helper()
	r, err := hubv1.NewAdminServiceClient(m.Conn()).CreateAgent(bearer(context.Background(), relAdminToken(tb, m)), &hubv1.CreateAgentRequest{Name: name})
	if err != nil {
		tb.Fatalf("create agent %s: %v", name, err)
	}
	return r.GetToken()
}

// dbFingerprint hashes every row of every table of the hub's database, read
// through a separate read-only connection: two equal fingerprints mean
// nothing was written in between.
func dbFingerprint(t *testing.T, m *app.Main) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(m.DataDir, "hub.db")+"?vfs=unix-excl&_query_only=1") // the store's VFS: the file is the hub process's alone
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Virtual tables keep their rows in tables of their own (the full-text
	// index's shadow tables), or none (its tokenizer): the real tables say it all.
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		tables = append(tables, s)
	}
	rows.Close()
	h := sha256.New()
	for _, tb := range tables {
		rows, err := db.Query(`SELECT * FROM "` + tb + `"`)
		if err != nil {
			t.Fatalf("read %s: %v", tb, err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		var lines []string
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("%v", vals))
		}
		rows.Close()
		sort.Strings(lines)
		fmt.Fprintf(h, "%s:%d\n%s\n", tb, len(lines), strings.Join(lines, "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// validRequests are requests that would write (or read) successfully with
// the right token: a refusal then proves authentication ran first. Every
// RPC must have one (TestIdentityCoversEveryRPC), so a new RPC is tested.
var validRequests = map[string]string{
	"AgentService.Heartbeat":               `{}`,
	"AgentService.GetStatus":               `{}`,
	"AgentService.PostMessage":             `{"to":["bob"],"body":"hello from an intruder"}`,
	"AgentService.ListMessages":            `{}`,
	"AgentService.MarkRead":                `{"up_to_id":"1"}`,
	"AgentService.WaitForMessages":         `{"timeout_seconds":0}`,
	"AgentService.Subscribe":               `{"via":"channel"}`,
	"AgentService.JoinChannel":             `{"channel":"#ops"}`,
	"AgentService.LeaveChannel":            `{"channel":"#ops"}`,
	"AgentService.CreateActivityLog":       `{"type":"other","title":"t","content":["c"]}`,
	"AgentService.Checkpoint":              `{"current_activity":"working"}`,
	"AgentService.StartDeepWork":           `{"mode":"flexible","planned_activity":"p"}`,
	"AgentService.GetDeepWork":             `{}`,
	"AgentService.GetHeartbeatElapsedTime": `{}`,
	"AgentService.RespondToPulse":          `{"text":"HEARTBEAT_OK"}`,
	"AgentService.ListPeers":               `{}`,
	"AgentService.ListChannels":            `{}`,
	"AgentService.ReservePaths":            `{"paths":["src/"]}`,
	"AgentService.RenewReservations":       `{}`,
	"AgentService.ReleasePaths":            `{}`,
	"AgentService.ListReservations":        `{}`,
	"AgentService.SearchMessages":          `{"query":"hello"}`,
	"AgentService.JoinHub":                 `{"name":"intruder"}`,
	"AgentService.TakeInjection":           `{}`,
	"AgentService.CheckStop":               `{}`,
	"AgentService.AcknowledgeMessage":      `{"ids":["1"]}`,
	"AgentService.GetMessageReceipts":      `{"id":"1"}`,
	"AgentService.RequestApproval":         `{"tool":"Bash","input":"{\"command\":\"ls\"}","wait_seconds":1}`,
	"AgentService.AskHuman":                `{"question":"ship it?","timeout_seconds":0}`,
	"AgentService.NoteHostEvent":           `{"event":"needs_input"}`,
	"AgentService.GetUsage":                `{"group_by":"agent,model"}`,
	"AgentService.ConfirmDelivery":         `{"ids":["1"],"via":"hook"}`,
	"AgentService.EndSession":              `{"via":"hook"}`,

	"AdminService.CreateAgent":             `{"name":"intruder"}`,
	"AdminService.ListAgents":              `{}`,
	"AdminService.GetAgent":                `{"name":"alice"}`,
	"AdminService.UpdateAgent":             `{"name":"alice","role":"owned"}`,
	"AdminService.DisableAgent":            `{"name":"alice"}`,
	"AdminService.EnableAgent":             `{"name":"dora"}`,
	"AdminService.RotateToken":             `{"name":"alice"}`,
	"AdminService.RevokeToken":             `{"name":"alice"}`,
	"AdminService.GetAgentHealth":          `{"name":"alice"}`,
	"AdminService.ListEvents":              `{}`,
	"AdminService.ListDeepWork":            `{}`,
	"AdminService.Nudge":                   `{"name":"alice","text":"wake up"}`,
	"AdminService.GetBeat":                 `{}`,
	"AdminService.SetPulseConfig":          `{"config":{"agent":"alice"}}`,
	"AdminService.ListPulses":              `{}`,
	"AdminService.TriggerPulse":            `{"name":"alice"}`,
	"AdminService.CreateCronJob":           `{"job":{"name":"intruder-job"}}`,
	"AdminService.ListCronJobs":            `{}`,
	"AdminService.DeleteCronJob":           `{"name":"intruder-job"}`,
	"AdminService.SetCronJobEnabled":       `{"name":"intruder-job","enabled":true}`,
	"AdminService.RunCronJob":              `{"name":"intruder-job"}`,
	"AdminService.ListCronRuns":            `{}`,
	"AdminService.GetHubInfo":              `{}`,
	"AdminService.Backup":                  `{"path":"BACKUP_PATH"}`,
	"AdminService.EndDeepWork":             `{"name":"alice"}`,
	"AdminService.ListActivity":            `{"name":"alice"}`,
	"AdminService.ListAgentOverviews":      `{}`,
	"AdminService.PruneMessages":           `{"before":"2020-01-01T00:00:00Z"}`,
	"AdminService.ForceReleaseReservation": `{"id":"1"}`,
	"AdminService.CreateJoinCode":          `{"role":"intruder"}`,
	"AdminService.ListJoinCodes":           `{}`,
	"AdminService.RevokeJoinCode":          `{"id":"1"}`,
	"AdminService.CreateProject":           `{"name":"intruders"}`,
	"AdminService.ListProjects":            `{}`,
	"AdminService.LinkProjects":            `{"project":"default","other":"intruders"}`,
	"AgentService.CreateTask":              `{"task":{"title":"an intruder's task"}}`,
	"AgentService.ListTasks":               `{}`,
	"AgentService.GetTask":                 `{"id":"1"}`,
	"AgentService.UpdateTask":              `{"id":"1","task":{"title":"renamed"},"update_mask":"title"}`,
	"AgentService.ClaimTask":               `{"id":"1"}`,
	"AgentService.NextTask":                `{}`,
	"AgentService.CompleteTask":            `{"id":"1","note":"done"}`,
	"AgentService.BlockTask":               `{"id":"1","reason":"stuck"}`,
	"AdminService.ImportTasks":             `{"project":"default","tasks":[{"task":{"title":"x"}}]}`,
	"AdminService.SetTaskLease":            `{"project":"default","lease_seconds":600}`,
	"AdminService.UnlinkProjects":          `{"project":"default","other":"intruders"}`,
	"AdminService.DeleteAgent":             `{"name":"dora"}`, // disabled below
	"AdminService.ListInbox":               `{}`,
	"AdminService.AnswerInboxItem":         `{"id":"1","decision":"allow"}`,
	"AdminService.ListApprovalRules":       `{}`,
	"AdminService.RevokeApprovalRule":      `{"id":"1"}`,
	"AdminService.CreateWebhook":           `{"url":"http://127.0.0.1:9/intruder"}`,
	"AdminService.ListWebhooks":            `{}`,
	"AdminService.DeleteWebhook":           `{"id":"1"}`,
	"AdminService.ListWebhookDeliveries":   `{}`,
	"AdminService.CreatePerson":            `{"name":"intruder"}`,
	"AdminService.ListPeople":              `{}`,
	"AdminService.RevokePerson":            `{"name":"alice"}`,
	"AdminService.ListUsage":               `{"group_by":"agent"}`,
	"AdminService.SetBudget":               `{"agent":"bob","usd_per_day":1000}`,
	"AdminService.ListBudgets":             `{}`,
	"AdminService.DeleteBudget":            `{"agent":"bob"}`,
}

// rpc is one method of the API with its REST route.
type rpc struct {
	service, name string // "AgentService", "PostMessage"
	desc          protoreflect.MethodDescriptor
	verb, path    string // from gateway.yaml
	body          string // "*", a field name, or "" (no body)
}

func (r rpc) key() string { return r.service + "." + r.name }

// apiRPCs lists every RPC of both services, with the REST route that
// gateway.yaml gives it (none for a server stream: the gateway serves
// unary calls, in process).
func apiRPCs(t *testing.T) []rpc {
	t.Helper()
	routes := gatewayRoutes(t)
	var out []rpc
	for _, fd := range []protoreflect.FileDescriptor{hubv1.File_hub_v1_agent_proto, hubv1.File_hub_v1_admin_proto} {
		svcs := fd.Services()
		for i := range svcs.Len() {
			sd := svcs.Get(i)
			ms := sd.Methods()
			for j := range ms.Len() {
				md := ms.Get(j)
				r := rpc{service: string(sd.Name()), name: string(md.Name()), desc: md}
				rt, ok := routes["hub.v1."+r.key()]
				if !ok && !md.IsStreamingServer() {
					t.Errorf("%s has no HTTP rule in gateway.yaml", r.key())
				}
				r.verb, r.path, r.body = rt[0], rt[1], rt[2]
				out = append(out, r)
			}
		}
	}
	return out
}

// gatewayRoutes reads proto/hub/v1/gateway.yaml: selector → verb, path, body.
func gatewayRoutes(t *testing.T) map[string][3]string {
	t.Helper()
	f, err := os.Open("../../proto/hub/v1/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][3]string{}
	var sel string
	var cur [3]string
	flush := func() {
		if sel != "" {
			out[sel] = cur
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "- "), ":")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch k {
		case "selector":
			flush()
			sel, cur = v, [3]string{}
		case "get", "post", "put", "patch", "delete":
			cur[0], cur[1] = strings.ToUpper(k), v
		case "body":
			cur[2] = v
		}
	}
	flush()
	return out
}

func newMsg(d protoreflect.MessageDescriptor) proto.Message {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName())
	if err != nil {
		panic(err)
	}
	return mt.New().Interface()
}

// invoke calls r over gRPC with the JSON request and the given
// authorization header value ("" = none).
func invoke(ctx context.Context, conn *grpc.ClientConn, r rpc, reqJSON, auth string) error {
	req := newMsg(r.desc.Input())
	if err := protojson.Unmarshal([]byte(reqJSON), req); err != nil {
		return fmt.Errorf("bad test request for %s: %w", r.key(), err)
	}
	if auth != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", auth)
	}
	return callRPC(ctx, conn, r, req, newMsg(r.desc.Output()))
}

// callRPC calls r over gRPC with req; a stream's first frame (or
// its refusal) is its reply, and the stream ends there.
func callRPC(ctx context.Context, conn *grpc.ClientConn, r rpc, req, resp proto.Message) error {
	method := "/hub.v1." + r.service + "/" + r.name
	if !r.desc.IsStreamingServer() {
		return conn.Invoke(ctx, method, req, resp)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: r.desc.IsStreamingClient()}, method)
	if err != nil {
		return err
	}
	// A stream the hub already refused answers the send io.EOF; its
	// status comes with the receive.
	if err := st.SendMsg(req); err != nil && err != io.EOF {
		return err
	}
	if err := st.CloseSend(); err != nil {
		return err
	}
	return st.RecvMsg(resp)
}

// callREST calls r's REST route and returns the HTTP status and body.
func callREST(t *testing.T, base string, r rpc, reqJSON, auth string) (int, string) {
	t.Helper()
	path := r.path
	for _, p := range []string{"{name}", "{config.agent}"} {
		path = strings.ReplaceAll(path, p, "alice")
	}
	var body io.Reader
	switch r.body {
	case "*":
		body = strings.NewReader(reqJSON)
	case "":
	default:
		var fields map[string]json.RawMessage
		json.Unmarshal([]byte(reqJSON), &fields)
		b := fields[r.body]
		if b == nil {
			b = []byte(`{}`)
		}
		body = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(r.verb, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.verb, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func httpStatus(c codes.Code) int {
	switch c {
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	}
	return 0
}

func TestIdentityCoversEveryRPC(t *testing.T) {
	t.Parallel()
	for _, r := range apiRPCs(t) {
		if _, ok := validRequests[r.key()]; !ok {
			t.Errorf("%s has no entry in validRequests: add a request that would succeed with the right token", r.key())
		}
	}
}

// TestIdentity tries every RPC, over gRPC and over its REST route, with
// every kind of wrong credential, and checks the refusal's code, its
// message, and that nothing was written (the whole database is unchanged,
// no backup file appears, no presence is recorded).
func TestIdentity(t *testing.T) {
	m := relHub(t, func(m *app.Main) { m.RateLimit.PerSecond = 0 })
	conn := relDial(t, m)
	base := "http://" + m.HTTPAddress()
	adminTok := relAdminToken(t, m)
	admin := hubv1.NewAdminServiceClient(m.Conn())
	ctx := bearer(context.Background(), adminTok)

	aliceTok := relCreateAgent(t, m, "alice")
	relCreateAgent(t, m, "bob")
	doraTok := relCreateAgent(t, m, "dora")
	revTok := relCreateAgent(t, m, "rev")
	carlTok := relCreateAgent(t, m, "carl")
	if _, err := admin.DisableAgent(ctx, &hubv1.DisableAgentRequest{Name: "dora"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RevokeToken(ctx, &hubv1.RevokeTokenRequest{Name: "rev"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RotateToken(ctx, &hubv1.RotateTokenRequest{Name: "carl"}); err != nil {
		t.Fatal(err)
	}
	// A message for alice, so MarkRead and the list calls have something.
	if _, err := hubv1.NewAgentServiceClient(conn).PostMessage(ctx, &hubv1.PostMessageRequest{To: []string{"alice"}, Body: "hi"}); err != nil {
		t.Fatal(err)
	}
	// A reservation of alice's (ID 1), so the reservation calls have one.
	if _, err := hubv1.NewAgentServiceClient(conn).ReservePaths(bearer(context.Background(), aliceTok), &hubv1.ReservePathsRequest{Paths: []string{"docs/"}}); err != nil {
		t.Fatal(err)
	}
	wrongTok, _ := hub.NewToken()
	backupPath := filepath.Join(t.TempDir(), "stolen.db")

	type cred struct {
		name        string
		auth        string     // authorization header value
		agent, adm  codes.Code // expected on agent / admin calls
		wantMessage string     // part of the message on agent calls
	}
	creds := []cred{
		{"no token", "", codes.Unauthenticated, codes.Unauthenticated, "missing token"},
		{"not a bearer token", "Basic " + aliceTok, codes.Unauthenticated, codes.Unauthenticated, "missing token"},
		{"wrong token", "Bearer " + wrongTok, codes.Unauthenticated, codes.Unauthenticated, "unknown or revoked token"},
		{"revoked token", "Bearer " + revTok, codes.Unauthenticated, codes.Unauthenticated, "unknown or revoked token"},
		{"token replaced by rotation", "Bearer " + carlTok, codes.Unauthenticated, codes.Unauthenticated, "unknown or revoked token"},
		{"disabled agent's token", "Bearer " + doraTok, codes.PermissionDenied, codes.Unauthenticated, "disabled"},
		{"admin token on agent calls, agent token on admin calls", "", codes.PermissionDenied, codes.PermissionDenied, "admin token was given"},
	}
	rpcs := apiRPCs(t)
	before := dbFingerprint(t, m)
	presence := map[string]time.Time{}
	for _, name := range []string{"dora", "rev", "carl"} {
		a, err := m.Services.Agents.Agent(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		presence[name] = m.Services.Liveness.PresenceOf(a).LastSeenAt
	}

	tried := 0
	for _, c := range creds {
		for _, r := range rpcs {
			auth, want, wantMessage := c.auth, c.agent, c.wantMessage
			if r.service == "AdminService" {
				want = c.adm
			}
			if c.name == creds[len(creds)-1].name {
				if rule, _ := admission.Lookup("/hub.v1." + r.service + "/" + r.name); rule.Who.Has(admission.Agent) && rule.Who.Has(admission.Admin|admission.Person) {
					continue // both tokens are the right kind: the call acts for either
				}
				if r.service == "AgentService" {
					auth = "Bearer " + adminTok
				} else {
					auth = "Bearer " + aliceTok
				}
			}
			if r.key() == "AgentService.JoinHub" {
				// Its credential is a join code: no token is one.
				want, wantMessage = codes.Unauthenticated, "join code"
			}
			reqJSON := strings.ReplaceAll(validRequests[r.key()], "BACKUP_PATH", backupPath)
			t.Run(c.name+"/grpc/"+r.key(), func(t *testing.T) {
				err := invoke(context.Background(), conn, r, reqJSON, auth)
				if got := status.Code(err); got != want {
					t.Fatalf("code %v (%v), want %v", got, err, want)
				}
				msg := status.Convert(err).Message()
				if r.service == "AgentService" && !strings.Contains(msg, wantMessage) {
					t.Errorf("message %q does not say %q", msg, wantMessage)
				}
				if r.service == "AdminService" && !strings.Contains(msg, "admin token") {
					t.Errorf("message %q does not mention the admin token", msg)
				}
			})
			tried++
			if r.path == "" {
				continue // no REST route
			}
			tried++
			t.Run(c.name+"/rest/"+r.verb+" "+r.path, func(t *testing.T) {
				code, body := callREST(t, base, r, reqJSON, auth)
				if code != httpStatus(want) {
					t.Fatalf("HTTP %d (%s), want %d", code, body, httpStatus(want))
				}
				var e struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Message == "" || codes.Code(e.Code) != want {
					t.Errorf("body %s: want a JSON error with code %d and a message", body, want)
				}
			})
		}
	}
	if after := dbFingerprint(t, m); after != before {
		t.Errorf("refused calls changed the database")
	}
	if _, err := os.Stat(backupPath); err == nil {
		t.Errorf("a refused Backup call wrote %s", backupPath)
	}
	if n := m.Services.Core.ParkedWaits(); n != 0 {
		t.Errorf("%d waits parked by refused calls", n)
	}
	for name, was := range presence {
		a, _ := m.Services.Agents.Agent(context.Background(), name)
		if now := m.Services.Liveness.PresenceOf(a).LastSeenAt; !now.Equal(was) {
			t.Errorf("a refused call with %s's token counted as its presence", name)
		}
	}
	t.Logf("identity: %d refused calls (%d RPCs × %d credentials × gRPC and REST), database unchanged", tried, len(rpcs), len(creds))

	// The fingerprint does see writes: one accepted post changes it.
	if err := invoke(context.Background(), conn, rpcByKey(t, rpcs, "AgentService.PostMessage"), validRequests["AgentService.PostMessage"], "Bearer "+aliceTok); err != nil {
		t.Fatalf("post with alice's token: %v", err)
	}
	if dbFingerprint(t, m) == before {
		t.Fatal("the fingerprint did not change after an accepted post: the no-write check proves nothing")
	}
}

func rpcByKey(t *testing.T, rpcs []rpc, key string) rpc {
	t.Helper()
	for _, r := range rpcs {
		if r.key() == key {
			return r
		}
	}
	t.Fatalf("no RPC %s", key)
	return rpc{}
}

// TestSenderIsTheToken: no request can name its sender. Over gRPC the
// request has no such field; over REST a "from" (or any unknown) field is
// refused with 400 and nothing is written; every accepted post is from the
// token's agent, whatever its body or mentions say.
func TestSenderIsTheToken(t *testing.T) {
	m := relHub(t, nil)
	base := "http://" + m.HTTPAddress()
	aliceTok := relCreateAgent(t, m, "alice")
	bobTok := relCreateAgent(t, m, "bob")
	relCreateAgent(t, m, "carol")

	for _, f := range []string{"from", "sender", "agent", "from_agent"} {
		if hubv1.File_hub_v1_agent_proto.Messages().ByName("PostMessageRequest").Fields().ByName(protoreflect.Name(f)) != nil {
			t.Errorf("PostMessageRequest has a %q field: the sender must come from the token only", f)
		}
	}

	before := dbFingerprint(t, m)
	for _, body := range []string{
		`{"from":"bob","to":["carol"],"body":"I am bob"}`,
		`{"sender":"bob","to":["carol"],"body":"I am bob"}`,
		`{"to":["carol"],"body":"I am bob","from_agent":"bob"}`,
	} {
		req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+aliceTok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "unknown field") {
			t.Errorf("POST /v1/messages %s: HTTP %d %s, want 400 naming the unknown field", body, resp.StatusCode, b)
		}
	}
	if dbFingerprint(t, m) != before {
		t.Error("a refused post with a sender field changed the database")
	}

	agent := func(tok string) (context.Context, hubv1.AgentServiceClient) {
		return bearer(context.Background(), tok), hubv1.NewAgentServiceClient(relDial(t, m))
	}
	ctx, alice := agent(aliceTok)
	for _, req := range []*hubv1.PostMessageRequest{
		{To: []string{"carol"}, Body: "from: bob\nI am bob"},
		{To: []string{"carol"}, Body: "@bob says hi", Mentions: []string{"bob"}},
		{Channel: "#ops", Body: "as bob"},
	} {
		r, err := alice.PostMessage(ctx, req)
		if err != nil {
			t.Fatalf("post %v: %v", req, err)
		}
		if got := r.GetMessage().GetFrom(); got != "alice" {
			t.Errorf("post by alice's token has from=%q", got)
		}
	}
	// And what carol reads says alice too.
	carolMsgs, err := hubv1.NewAgentServiceClient(m.Conn()).ListMessages(bearer(context.Background(), relAdminToken(t, m)), &hubv1.ListMessagesRequest{Agent: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range carolMsgs.GetMessages() {
		if msg.GetFrom() != "alice" {
			t.Errorf("carol's inbox has a message from %q; only alice posted", msg.GetFrom())
		}
	}
	// Bob reads only his own inbox: alice's posts to carol are not his
	// unless they mention him.
	bctx, bob := agent(bobTok)
	lr, err := bob.ListMessages(bctx, &hubv1.ListMessagesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range lr.GetMessages() {
		if slicesContains(msg.GetTo(), "carol") && !slicesContains(msg.GetTo(), "bob") && !slicesContains(msg.GetMentions(), "bob") && msg.GetChannel() == "" {
			t.Errorf("bob can read carol's direct message %s", msg.GetId())
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
