package copystore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/agenthub/hub/internal/store/sqlite"
	"github.com/jackc/pgx/v5"
)

// filled is a SQLite hub filled through the real service with every noun.
type filled struct {
	dir      string
	token    string              // a live agent's token
	lastPost int64               // the highest message ID
	inbox    map[string][3]int64 // agent → unread, mentions, latest message ID
}

// inboxes reads every live agent's unread counts through the service.
func inboxes(t *testing.T, s *hub.Services) map[string][3]int64 {
	t.Helper()
	ctx := context.Background()
	agents, err := s.Agents.ListAgents(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][3]int64{}
	for _, a := range agents {
		st, err := s.Liveness.Status(ctx, a)
		if err != nil {
			t.Fatalf("status of %s: %v", a.Name, err)
		}
		out[a.Name] = [3]int64{st.Unread, st.Mentions, st.LatestMessageID}
	}
	return out
}

func fill(t *testing.T) filled {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, DatabaseFile(dir), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clock := hub.NewFakeClock(time.Date(2026, 3, 1, 9, 0, 0, 123456789, time.UTC))
	cfg := hub.DefaultConfig()
	cfg.Location = time.UTC
	s := hub.NewServices(hub.NewCore(db, clock, cfg, hub.NewWaiters(cfg.WaitLimits, clock)))
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Core.Shutdown()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	agents := map[string]*hub.Agent{}
	var f filled
	f.dir = dir
	for _, n := range []string{"alice", "bob", "carol"} {
		a, tok, err := s.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: n, DisplayName: strings.ToUpper(n), Role: "dev", Locale: "ja"})
		must(err)
		agents[n] = a
		if n == "alice" {
			f.token = tok
		}
	}
	_, _, err = s.Agents.RotateToken(ctx, "bob", false)
	must(err)
	for _, n := range []string{"alice", "bob"} {
		_, err := s.Liveness.Heartbeat(ctx, agents[n])
		must(err)
	}
	_, err = s.Messages.JoinChannel(ctx, agents["alice"], "#general")
	must(err)
	_, err = s.Messages.JoinChannel(ctx, agents["bob"], "#general")
	must(err)
	clock.Advance(time.Second)
	m1, err := s.Messages.Post(ctx, agents["alice"], "", hub.PostRequest{To: []string{"bob", "carol"}, Body: "hello, world"})
	must(err)
	_, err = s.Messages.Post(ctx, agents["bob"], "", hub.PostRequest{Channel: "#general", Body: "ping @alice", Mentions: []string{"alice"}, ReplyTo: strconv.FormatInt(m1.ID, 10)})
	must(err)
	_, _, err = s.Messages.MarkRead(ctx, agents["bob"], strconv.FormatInt(m1.ID, 10))
	must(err)
	_, err = s.Injections.TakeInjection(ctx, agents["carol"], 0) // a host hook's injection cursor
	must(err)
	_, err = s.Liveness.CreateActivityLog(ctx, agents["alice"], hub.ActivityLog{Type: hub.ActivityCreation, Title: "copying", Content: []string{"line, with a comma", "two"}, Tags: []string{"pg"}})
	must(err)
	_, err = s.Liveness.Checkpoint(ctx, agents["bob"], "reading", 0)
	must(err)
	_, err = s.Liveness.StartDeepWork(ctx, agents["alice"], hub.StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "focus"})
	must(err)
	_, err = s.Liveness.StartDeepWork(ctx, agents["bob"], hub.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "deep", PlannedMinutes: 10})
	must(err)
	_, err = s.Liveness.EndDeepWork(ctx, "bob")
	must(err)
	_, _, err = s.Reservations.ReservePaths(ctx, agents["alice"], hub.ReservationRequest{Patterns: []string{"internal/store/**"}, Mode: hub.ReservationExclusive, TTL: 24 * time.Hour, Reason: "moving the store"})
	must(err)
	jc, code, err := s.Agents.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{Role: "reviewer", Note: "copied", MaxUses: 3})
	must(err)
	_, _, err = s.Agents.Join(ctx, hub.JoinRequest{Code: code, Name: "joiner"})
	must(err)
	_, err = s.Agents.RevokeJoinCode(ctx, jc.ID)
	must(err)
	_, err = s.Agents.SetAgentDisabled(ctx, "carol", true)
	must(err)
	_, err = s.Schedule.SetPulseConfig(ctx, "alice", hub.PulseConfig{Enabled: true, Interval: time.Hour, Instructions: "check the queue", OutputChannel: "#general"})
	must(err)
	_, _, err = s.Schedule.TriggerPulse(ctx, "alice")
	must(err)
	_, _, err = s.Schedule.CreateCronJob(ctx, hub.CronJob{Name: "standup", Kind: hub.CronEvery, EverySeconds: 3600, Target: "#general", Message: "standup", Enabled: true})
	must(err)
	_, err = s.Schedule.RunCronJob(ctx, "standup")
	must(err)
	_, _, err = s.Schedule.CreateCronJob(ctx, hub.CronJob{Name: "gone", Kind: hub.CronEvery, EverySeconds: 60, Target: "bob", Message: "x", Enabled: true})
	must(err)
	must(s.Schedule.DeleteCronJob(ctx, "gone")) // an ID SQLite gave and no row keeps
	// A second project, linked to default, with its own #general.
	_, err = s.Projects.CreateProject(ctx, "team")
	must(err)
	must(s.Projects.LinkProjects(ctx, "team", hub.DefaultProject))
	erin, _, err := s.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: "erin", Project: "team"})
	must(err)
	_, err = s.Messages.Post(ctx, erin, "", hub.PostRequest{Channel: "#general", Body: "team room", To: []string{"alice"}})
	must(err)
	// A task board: a task claimed by alice with a checkpoint naming it, one
	// waiting for it, and the team's own lease.
	board := s.Tasks
	first, err := board.Create(ctx, agents["bob"], "", hub.TaskSpec{Title: "copy the board", Labels: []string{"pg", "copy"}, Paths: []string{"internal/store/copystore/"}})
	must(err)
	_, err = board.Create(ctx, nil, hub.DefaultProject, hub.TaskSpec{Title: "then check it", DependsOn: []int64{first.ID}, Priority: hub.PriorityHigh})
	must(err)
	_, _, err = board.Claim(ctx, agents["alice"], first.ID)
	must(err)
	_, err = s.Liveness.Checkpoint(ctx, agents["alice"], "copying the tasks", first.ID)
	must(err)
	_, err = board.SetLease(ctx, "team", 45*time.Minute)
	must(err)
	// People in the loop: a person, an answered approval remembered as
	// the agent's rule (agent_id set) and the project's (NULL), a question
	// still open, a webhook with a delivery logged.
	people := s.People
	_, _, err = people.CreatePerson(ctx, "pat", []string{"team"})
	must(err)
	in := s.Inbox
	for _, remember := range []string{hub.RememberAgent, hub.RememberProject} {
		done := make(chan error, 1)
		go func() {
			_, err := in.RequestApproval(ctx, agents["alice"], hub.ApprovalRequest{Tool: "Bash" + remember, Input: `{"command":"make"}`, CallKey: "k", Wait: time.Minute})
			done <- err
		}()
		var open []*hub.InboxItem
		for len(open) == 0 {
			open, _, err = in.ListItems(ctx, nil, "open", "", 0, "")
			must(err)
		}
		_, err = in.AnswerItem(ctx, &hub.Person{Name: "pat"}, open[0].ID, hub.Answer{Decision: hub.DecisionAllow, Remember: remember})
		must(err)
		must(<-done)
	}
	_, err = in.AskHuman(ctx, agents["bob"], hub.QuestionRequest{Question: "which one?", Options: []string{"a", "b"}, TimeoutSeconds: new(int32)})
	must(err)
	hooks := s.Webhooks
	w, err := hooks.CreateWebhook(ctx, &hub.Webhook{URL: "https://chat.example.com/hooks/x", Kinds: []hub.ItemKind{hub.KindQuestion}, Projects: []string{hub.DefaultProject}})
	must(err)
	must(hooks.LogDelivery(ctx, &hub.WebhookDelivery{WebhookID: w.ID, ItemID: 1, Status: hub.DeliveryDelivered, Attempts: 2, Code: 200, CreatedAt: clock.Now()}))
	_, err = s.Budgets.Set(ctx, "pat", hub.BudgetRequest{Agent: "alice", USDPerDay: 20})
	must(err)
	_, err = s.Budgets.Set(ctx, "pat", hub.BudgetRequest{Project: hub.DefaultProject, TokensPerDay: 1_000_000})
	must(err)
	must(s.Usage.Record(ctx, agents["alice"], []hub.UsageDelta{{At: clock.Now(), Model: "claude-test", Counts: hub.UsageCounts{Input: 120, Output: 30, CacheRead: 5, CacheCreation: 2, Requests: 1, CostUSD: 0.25}}}, ""))
	clock.Advance(3 * time.Hour)
	_, _, err = s.Schedule.AdvanceBeat(ctx, clock.Now(), time.Hour)
	must(err)
	_, _, _, err = s.Liveness.SweepHealth(ctx, clock.Now(), 100)
	must(err)
	set := hub.DefaultScheduleSettings()
	_, _, err = s.Nudges.CheckNudges(ctx, clock.Now(), set)
	must(err)
	_, err = s.Liveness.FlushPresence(ctx, clock.Now(), set)
	must(err)
	msgs, _, _, err := s.Messages.AdminList(ctx, hub.AdminListRequest{Limit: 100, Newest: true})
	must(err)
	for _, m := range msgs {
		f.lastPost = max(f.lastPost, m.ID)
	}
	f.inbox = inboxes(t, s)
	return f
}

// dumpSQLite renders every table of the SQLite file as sorted rows of text.
func dumpSQLite(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]string{}
	for _, tb := range tables {
		rows, err := db.Query(`SELECT * FROM ` + tb.name)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var cells []string
			for i, c := range cols {
				cells = append(cells, c+"="+sqliteCell(vals[i]))
			}
			slices.Sort(cells)
			out[tb.name] = append(out[tb.name], strings.Join(cells, " "))
		}
		rows.Close()
		slices.Sort(out[tb.name])
	}
	return out
}

func sqliteCell(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return fmt.Sprintf("%q", v)
	case string:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}

// dumpPostgres renders the same tables in SQLite's spelling: booleans as
// 0/1, arrays as SQLite stores them (a JSON array where SQLite's value is
// one, else comma-separated).
func dumpPostgres(t *testing.T, url string, like map[string][]string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	out := map[string][]string{}
	for _, tb := range tables {
		rows, err := conn.Query(ctx, `SELECT * FROM `+tb.name)
		if err != nil {
			t.Fatal(err)
		}
		fields := rows.FieldDescriptions()
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			var cells []string
			for i, fd := range fields {
				if slices.Contains(tb.generated, fd.Name) {
					continue // PostgreSQL's own, computed from the copied columns
				}
				cells = append(cells, fd.Name+"="+postgresCell(vals[i], jsonIn(like[tb.name], fd.Name)))
			}
			slices.Sort(cells)
			out[tb.name] = append(out[tb.name], strings.Join(cells, " "))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out[tb.name])
	}
	return out
}

// jsonIn reports whether SQLite stores column col of these rows as JSON.
func jsonIn(rows []string, col string) bool {
	for _, r := range rows {
		if strings.Contains(r, col+`="[`) {
			return true
		}
	}
	return false
}

func postgresCell(v any, asJSON bool) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if v {
			return "1"
		}
		return "0"
	case []any:
		xs := make([]string, len(v))
		for i, x := range v {
			xs[i] = x.(string)
		}
		if asJSON {
			b, _ := json.Marshal(xs)
			if len(xs) == 0 {
				b = []byte("[]")
			}
			return fmt.Sprintf("%q", b)
		}
		return fmt.Sprintf("%q", strings.Join(xs, ","))
	case []byte, string:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}

func TestCopyRoundTrip(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	f := fill(t)
	want := dumpSQLite(t, DatabaseFile(f.dir))
	for _, tb := range tables {
		if tb.name != "channel_members" && tb.name != "agent_checks" && len(want[tb.name]) == 0 {
			t.Errorf("the filled hub has no %s: the round trip would not test that table", tb.name)
		}
	}

	var progress bytes.Buffer
	err := Copy(ctx, f.dir, url, &progress)
	t.Log(progress.String())
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	for _, tb := range tables {
		line := fmt.Sprintf("copy-store: %-16s %8d rows", tb.name, len(want[tb.name]))
		if !strings.Contains(progress.String(), line) {
			t.Errorf("progress lacks %q:\n%s", line, progress.String())
		}
	}
	got := dumpPostgres(t, url, want)
	for _, tb := range tables {
		if !slices.Equal(got[tb.name], want[tb.name]) {
			t.Errorf("table %s after the copy:\n got %q\nwant %q", tb.name, got[tb.name], want[tb.name])
		}
	}

	// A second copy into the same database is refused, and writes nothing.
	progress.Reset()
	err = Copy(ctx, f.dir, url, &progress)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("a copy into a filled database: err = %v, want a refusal naming a non-empty target", err)
	}
	if again := dumpPostgres(t, url, want); !slices.Equal(again["messages"], want["messages"]) {
		t.Errorf("the refused copy changed the messages")
	}

	// A hub on the copy: the token still works, new IDs come after the copied ones.
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := hub.DefaultConfig()
	cfg.Location = time.UTC
	s := hub.NewServices(hub.NewCore(db, hub.NewFakeClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)), cfg, hub.NewWaiters(cfg.WaitLimits, hub.NewFakeClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)))))
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Core.Shutdown()
	// Read state: every agent's unread counts as they were (alice has an
	// unread mention, bob read up to alice's first message).
	if f.inbox["alice"][1] == 0 || f.inbox["bob"][0] == 0 {
		t.Fatalf("the filled hub's inboxes %v lack the unread mention and messages the test needs", f.inbox)
	}
	if got := inboxes(t, s); !maps.Equal(got, f.inbox) {
		t.Errorf("unread, mentions, latest per agent on the copy = %v, want %v as on SQLite", got, f.inbox)
	}
	alice, err := s.Agents.Authenticate(ctx, f.token)
	if err != nil {
		t.Fatalf("alice's token on the copy: %v", err)
	}
	if alice.Name != "alice" {
		t.Fatalf("the token authenticates %q, want alice", alice.Name)
	}
	m, err := s.Messages.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "after the move"})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID <= f.lastPost {
		t.Errorf("a post on the copy got ID %d, want above the copied %d", m.ID, f.lastPost)
	}
	// Search works on the copy, for copied messages and new ones: the
	// SQLite index is not copied, PostgreSQL computes its own.
	bob, _, err := s.Messages.AdminSearch(ctx, hub.SearchRequest{Query: "worlds", Agent: "bob"})
	if err != nil || len(bob) != 1 || bob[0].Message.Body != "hello, world" {
		t.Errorf("search on the copy for a copied message = %+v, %v; want bob's hello, world", bob, err)
	}
	if moved, _, err := s.Messages.AdminSearch(ctx, hub.SearchRequest{Query: "moving"}); err != nil || len(moved) != 1 || moved[0].Message.ID != m.ID {
		t.Errorf("search on the copy for a new message = %+v, %v; want message %d", moved, err, m.ID)
	}
	// The project link and team's own #general came along.
	if m, err := s.Messages.Post(ctx, alice, "", hub.PostRequest{Channel: "team/#general", Body: "hello team"}); err != nil || m.Project != "team" {
		t.Errorf("alice posts to the linked team/#general on the copy: %+v, %v", m, err)
	}
	// The other counters too: a new agent and a new cron job do not collide.
	if _, _, err := s.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: "dave"}); err != nil {
		t.Errorf("a new agent on the copy: %v", err)
	}
	if _, _, err := s.Schedule.CreateCronJob(ctx, hub.CronJob{Name: "later", Kind: hub.CronEvery, EverySeconds: 60, Target: "bob", Message: "x", Enabled: true}); err != nil {
		t.Errorf("a new cron job on the copy: %v", err)
	}
	jobs, err := s.Schedule.ListCronJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Name == "later" && j.ID <= 2 {
			t.Errorf("the new cron job got ID %d, which SQLite had already given (to a deleted job)", j.ID)
		}
	}
}

func TestCopyRefusals(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	pg, err := postgres.Open(ctx, url, postgres.Options{}) // the tables, to look into afterwards
	if err != nil {
		t.Fatal(err)
	}
	pg.Close()
	var progress bytes.Buffer

	empty := t.TempDir()
	if err := Copy(ctx, empty, url, &progress); err == nil || !strings.Contains(err.Error(), "no hub database") {
		t.Errorf("a data dir without hub.db: err = %v, want a refusal naming the missing database", err)
	}

	f := fill(t)
	lock, _, err := datadir.Lock(f.dir) // as a running hub holds it
	if err != nil {
		t.Fatal(err)
	}
	err = Copy(ctx, f.dir, url, &progress)
	lock.Close()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("in use by another hub (pid %d", os.Getpid())) {
		t.Errorf("a data dir held by a hub: err = %v, want a refusal naming the running hub", err)
	}
	// A table this binary does not know (a newer schema): refused.
	raw, err := sql.Open("sqlite3", "file:"+DatabaseFile(f.dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE reminders (id INTEGER PRIMARY KEY, body TEXT)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	err = Copy(ctx, f.dir, url, &progress)
	if err == nil || !strings.Contains(err.Error(), `table "reminders" that copy-store does not know`) {
		t.Errorf("a SQLite table copy-store does not know: err = %v, want a refusal naming it", err)
	}
	if got := dumpPostgres(t, url, nil); len(got["agents"]) != 0 {
		t.Errorf("refused copies wrote %d agents", len(got["agents"]))
	}
}
