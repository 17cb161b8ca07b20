package admission

import (
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestTableCoversEveryRPC walks the generated service descriptors: every
// method of both services has an entry (so a new RPC cannot be served
// unbudgeted), every entry names a method that exists, an agent-service
// entry acts as an agent (or joins) and draws from a budget with a
// positive weight, and an admin-service entry needs the admin, or is one
// of the people's calls that a person token may make too.
func TestTableCoversEveryRPC(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, fd := range []protoreflect.FileDescriptor{hubv1.File_hub_v1_agent_proto, hubv1.File_hub_v1_admin_proto} {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				method := "/" + string(sd.FullName()) + "/" + string(md.Name())
				seen[method] = true
				r, ok := Lookup(method)
				if !ok {
					t.Errorf("%s has no entry in the admission table: say who may call it and which budget it draws from", method)
					continue
				}
				switch sd.Name() {
				case "AgentService":
					if r.Who != Agent && r.Who != Joiner {
						t.Errorf("%s: who = %v, want agent (or joiner for a registration)", method, r.Who)
					}
					if r.Who == Agent && (r.Budget == None || r.Weight < 1) {
						t.Errorf("%s: budget %v weight %d, want an agent call on a budget with a weight of at least 1", method, r.Budget, r.Weight)
					}
				case "AdminService":
					if r.Who != Admin && !(r.Who == Person && peoplesCalls[string(md.Name())]) {
						t.Errorf("%s: who = %v, want admin (person only for the calls people make: answer the inbox, read, post)", method, r.Who)
					}
				default:
					t.Errorf("%s: a service the table does not expect", method)
				}
				if r.Parks && (md.IsStreamingClient() || md.IsStreamingServer()) {
					t.Errorf("%s: a parking call must be unary", method)
				}
			}
		}
	}
	for method := range table {
		if !seen[method] {
			t.Errorf("the admission table names %s, which no service has", method)
		}
	}
	if _, ok := Lookup("/hub.v1.AgentService/NoSuchCall"); ok {
		t.Error("Lookup admits a method that does not exist")
	}
}

// peoplesCalls are the admin-service calls a person token may make: the
// inbox, messages and the read-only views the dashboard shows. Nothing
// else: people do not administer the hub.
var peoplesCalls = map[string]bool{
	"ListInbox": true, "AnswerInboxItem": true, "ListApprovalRules": true, "RevokeApprovalRule": true,
	"PostMessage": true, "ListMessages": true, "ListChannels": true, "GetHubInfo": true,
	"ListAgentOverviews": true, "ListProjects": true,
}
