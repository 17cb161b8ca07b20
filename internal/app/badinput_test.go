package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/app"
)

// badInputs is the REST bad-input matrix: each is refused with 400 and a
// message that names what is wrong (want), and changes nothing. Calls are
// made as the agent "alice" (agent routes) or as the admin (/v1/admin/...).
var badInputs = []struct {
	name, method, path, body string
	want                     string
}{
	// Agent names.
	{"agent name upper case", "POST", "/v1/admin/agents", `{"name":"Alice"}`, "agent name"},
	{"agent name empty", "POST", "/v1/admin/agents", `{"name":""}`, "agent name is required"},
	{"agent name too long", "POST", "/v1/admin/agents", `{"name":"` + strings.Repeat("a", 64) + `"}`, "agent name"},
	{"agent name with a slash", "POST", "/v1/admin/agents", `{"name":"a/b"}`, "agent name"},
	{"agent name reserved", "POST", "/v1/admin/agents", `{"name":"admin"}`, "reserved"},
	{"agent description too long", "POST", "/v1/admin/agents", `{"name":"ok-name","description":"` + strings.Repeat("d", 4001) + `"}`, "description"},
	{"agent locale unknown", "POST", "/v1/admin/agents", `{"name":"ok-name","locale":"xx"}`, "locale"},
	// Messages.
	{"empty body", "POST", "/v1/messages", `{"to":["bob"],"body":""}`, "body is empty"},
	{"body over 64 KiB", "POST", "/v1/messages", `{"to":["bob"],"body":"` + strings.Repeat("x", 64<<10+1) + `"}`, "the limit is 65536 bytes"},
	{"no recipient", "POST", "/v1/messages", `{"body":"hi"}`, "no recipient"},
	{"bad channel name", "POST", "/v1/messages", `{"channel":"general","body":"hi"}`, "channel"},
	{"channel upper case", "POST", "/v1/messages", `{"channel":"#Ops","body":"hi"}`, "channel"},
	{"bad reply_to", "POST", "/v1/messages", `{"to":["bob"],"body":"hi","reply_to":"abc"}`, "reply_to"},
	{"bad recipient name", "POST", "/v1/messages", `{"to":["Bob!"],"body":"hi"}`, "agent name"},
	{"wrong JSON type", "POST", "/v1/messages", `{"to":"bob","body":"hi"}`, ""},
	{"not JSON", "POST", "/v1/messages", `to=bob`, ""},
	{"unknown field", "POST", "/v1/messages", `{"to":["bob"],"body":"hi","urgency":1}`, "unknown field"},
	{"post bad priority", "POST", "/v1/messages", `{"to":["bob"],"body":"hi","priority":9}`, "priority"},
	{"post unknown priority name", "POST", "/v1/messages", `{"to":["bob"],"body":"hi","priority":"PRIORITY_CRITICAL"}`, "PRIORITY_URGENT"},
	{"acknowledge no ID", "POST", "/v1/messages:acknowledge", `{"ids":[]}`, "ids"},
	{"acknowledge bad ID", "POST", "/v1/messages:acknowledge", `{"ids":["x"]}`, "ids"},
	{"receipts bad ID", "GET", "/v1/messages/x/receipts", ``, "id"},
	{"mark read bad ID", "POST", "/v1/messages:markRead", `{"up_to_id":"-5"}`, "up_to_id"},
	{"list bad after_id", "GET", "/v1/messages?after_id=x1", ``, "after_id"},
	{"list negative limit", "GET", "/v1/messages?limit=-1", ``, "limit"},
	{"join bad channel", "POST", "/v1/channels:join", `{"channel":"#"}`, "channel"},
	{"admin list bad channel", "GET", "/v1/admin/messages?channel=ops", ``, "channel"},
	// Waits.
	{"negative timeout", "POST", "/v1/messages:wait", `{"timeout_seconds":-1}`, "timeout_seconds"},
	{"wait bad after_id", "POST", "/v1/messages:wait", `{"timeout_seconds":0,"after_id":"soon"}`, "after_id"},
	// Liveness.
	{"activity log bad type", "POST", "/v1/activity-logs", `{"type":"dreaming","title":"t","content":["c"]}`, "type"},
	{"activity log title too long", "POST", "/v1/activity-logs", `{"type":"other","title":"` + strings.Repeat("t", 5000) + `","content":["c"]}`, "title"},
	{"checkpoint empty", "POST", "/v1/checkpoints", `{"current_activity":""}`, "current_activity"},
	{"deep work bad mode", "POST", "/v1/deep-work", `{"mode":"intense","planned_activity":"p"}`, "mode"},
	{"strict deep work without duration", "POST", "/v1/deep-work", `{"mode":"strict","planned_activity":"p"}`, "strict"},
	{"strict deep work too long", "POST", "/v1/deep-work", `{"mode":"strict","planned_activity":"p","planned_minutes":100000}`, "at most 240 minutes"},
	{"heartbeat ID malformed", "GET", "/v1/heartbeat/elapsed?heartbeat_id=2026", ``, "YYYYMMDDHHMMSS"},
	{"heartbeat ID in the future", "GET", "/v1/heartbeat/elapsed?heartbeat_id=29990101000000", ``, "in the future"},
	// Schedules.
	{"cron expression with 4 fields", "POST", "/v1/admin/cron-jobs", `{"name":"j","kind":"cron","expr":"0 9 * *","target":"bob","message":"m"}`, "expected 5 fields"},
	{"cron expression out of range", "POST", "/v1/admin/cron-jobs", `{"name":"j","kind":"cron","expr":"61 9 * * *","target":"bob","message":"m"}`, "cron expression"},
	{"cron kind unknown", "POST", "/v1/admin/cron-jobs", `{"name":"j","kind":"sometimes","target":"bob","message":"m"}`, "kind"},
	{"every without a period", "POST", "/v1/admin/cron-jobs", `{"name":"j","kind":"every","target":"bob","message":"m"}`, "every"},
	{"cron bad target", "POST", "/v1/admin/cron-jobs", `{"name":"j","kind":"cron","expr":"0 9 * * *","target":"Bob!","message":"m"}`, "target"},
	{"pulse bad active hours", "PUT", "/v1/admin/agents/alice/pulse", `{"enabled":true,"interval_seconds":600,"active_hours":"25:00-26:00","instructions":"x"}`, "active hours"},
	{"pulse bad time zone", "PUT", "/v1/admin/agents/alice/pulse", `{"enabled":true,"interval_seconds":600,"time_zone":"Mars/Olympus","instructions":"x"}`, "time zone"},
	{"every with a zero anchor", "POST", "/v1/admin/cron-jobs", `{"name":"j","every_seconds":60,"anchor":"0001-01-01T00:00:00Z","target":"bob","message":"m"}`, "anchor 0001-01-01T00:00:00Z is out of range"},
	{"every with the epoch as anchor", "POST", "/v1/admin/cron-jobs", `{"name":"j","every_seconds":60,"anchor":"1970-01-01T00:00:00Z","target":"bob","message":"m"}`, "give an RFC 3339 time after 1970-01-01T00:00:00Z"},
	{"pulse every second", "PUT", "/v1/admin/agents/alice/pulse", `{"enabled":true,"interval_seconds":1,"instructions":"x"}`, "give 1m0s to 168h0m0s"},
	{"events negative limit", "GET", "/v1/admin/events?limit=-1", ``, "limit"},
	// Exposure.
	{"trailing data after the body", "POST", "/v1/messages", `{"to":["bob"],"body":"hi"}{"to":["carol"]}`, "unexpected data after the JSON body"},
	{"cursor beyond the newest message", "GET", "/v1/messages?after_id=999999", ``, "beyond the newest message"},
	{"mention bomb", "POST", "/v1/messages", `{"to":["bob"],"body":"` + mentionBomb + `"}`, "the limit is 100 per message"},
}

// mentionBomb mentions 500 distinct names.
var mentionBomb = func() string {
	var b strings.Builder
	for i := range 500 {
		b.WriteString("@n" + strconv.Itoa(i) + " ")
	}
	return b.String()
}()

// TestBadInputMatrix sends every bad input of the matrix over REST: 400, a
// JSON error whose message names the problem, and the database unchanged.
// (A list limit or a wait timeout above the maximum is clamped, not
// refused, by design: SPEC §5.)
func TestBadInputMatrix(t *testing.T) {
	m := relHub(t, func(m *app.Main) { m.RateLimit.PerSecond = 0 })
	aliceTok := relCreateAgent(t, m, "alice")
	relCreateAgent(t, m, "bob")
	adminTok := relAdminToken(t, m)
	base := "http://" + m.HTTPAddress()
	before := dbFingerprint(t, m)
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			tok := aliceTok
			if strings.HasPrefix(tc.path, "/v1/admin/") {
				tok = adminTok
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct {
				Message string `json:"message"`
			}
			json.Unmarshal(b, &e)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("%s %s: HTTP %d %.300s, want 400", tc.method, tc.path, resp.StatusCode, b)
			}
			if e.Message == "" || !strings.Contains(e.Message, tc.want) {
				t.Errorf("%s %s: message %q does not say %q", tc.method, tc.path, e.Message, tc.want)
			}
		})
	}
	if dbFingerprint(t, m) != before {
		t.Error("refused bad inputs changed the database")
	}
	t.Logf("bad-input matrix: %d inputs refused with 400, database unchanged", len(badInputs))
}
