package admission

import (
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestEveryRPCDeclaresAdmission walks the descriptors of the hub's
// services: every method declares its admission (so a new RPC cannot be
// served unbudgeted), a call an agent may make draws from a budget with a
// positive weight, a call of the admin service needs the admin or is one
// of the people's calls that a person token may make too, and a person
// token makes no call beyond those.
func TestEveryRPCDeclaresAdmission(t *testing.T) {
	t.Parallel()
	if err := Check(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range hubFiles() {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				method := "/" + string(sd.FullName()) + "/" + string(md.Name())
				n++
				r, ok := Lookup(method)
				if !ok {
					t.Errorf("%s has no admission", method)
					continue
				}
				if r.Who.Has(Agent) && (r.Budget == None || r.Weight < 1) {
					t.Errorf("%s: budget %v weight %d, want an agent call on a budget with a weight of at least 1", method, r.Budget, r.Weight)
				}
				if r.Who.Has(Person) && !peoplesCalls[string(md.Name())] {
					t.Errorf("%s: who = %v, want a person only for the calls people make: answer the inbox, read, post", method, r.Who)
				}
				switch sd.Name() {
				case "AgentService":
					if !r.Who.Has(Agent) && r.Who != Joiner {
						t.Errorf("%s: who = %v, want an agent (or a joiner for a registration)", method, r.Who)
					}
				case "AdminService":
					if r.Who.Has(Agent) || r.Who.Has(Joiner) {
						t.Errorf("%s: who = %v, want the admin or a person", method, r.Who)
					}
				default:
					t.Errorf("%s: a service the hub does not expect", method)
				}
			}
		}
	}
	all, _ := rules()
	if n != len(all) || n < 90 {
		t.Errorf("%d methods, %d rules: want one rule per method of the hub's services", n, len(all))
	}
	if _, ok := Lookup("/hub.v1.AgentService/NoSuchCall"); ok {
		t.Error("Lookup admits a method that does not exist")
	}
}

// peoplesCalls are the calls a person token may make: the inbox, messages
// and the read-only views the dashboard shows. Nothing else: people do
// not administer the hub.
var peoplesCalls = map[string]bool{
	"ListInbox": true, "AnswerInboxItem": true, "ListApprovalRules": true, "RevokeApprovalRule": true,
	"PostMessage": true, "ListMessages": true, "ListChannels": true, "GetHubInfo": true,
	"ListAgentOverviews": true, "ListProjects": true, "ListUsage": true, "ListBudgets": true,
}

// TestReadRefusesAnUndeclaredRPC: an RPC without the option, or with one
// that names no caller, is an error naming it, and the hub does not
// start on it (Check is what app.Start asks).
func TestReadRefusesAnUndeclaredRPC(t *testing.T) {
	t.Parallel()
	declared := &descriptorpb.MethodOptions{}
	proto.SetExtension(declared, hubv1.E_Admission, &hubv1.Admission{Who: []hubv1.Caller{hubv1.Caller_CALLER_AGENT}, Budget: hubv1.Budget_BUDGET_READ, Weight: 1})
	nobody := &descriptorpb.MethodOptions{}
	proto.SetExtension(nobody, hubv1.E_Admission, &hubv1.Admission{Budget: hubv1.Budget_BUDGET_READ, Weight: 1})
	unbudgeted := &descriptorpb.MethodOptions{}
	proto.SetExtension(unbudgeted, hubv1.E_Admission, &hubv1.Admission{Who: []hubv1.Caller{hubv1.Caller_CALLER_AGENT}})
	empty := proto.String(".test.v1.Empty")
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("test/v1/s.proto"), Package: proto.String("test.v1"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Empty")}},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("S"), Method: []*descriptorpb.MethodDescriptorProto{
			{Name: proto.String("Declared"), InputType: empty, OutputType: empty, Options: declared},
			{Name: proto.String("Bare"), InputType: empty, OutputType: empty},
			{Name: proto.String("Nobody"), InputType: empty, OutputType: empty, Options: nobody},
			{Name: proto.String("Unbudgeted"), InputType: empty, OutputType: empty, Options: unbudgeted},
		}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(fd)
	if err == nil {
		t.Fatal("Load accepted RPCs without an admission")
	}
	for _, want := range []string{"/test.v1.S/Bare: no admission option", "/test.v1.S/Nobody: who names no caller", "/test.v1.S/Unbudgeted: an agent may make it without a budget", "option (hub.v1.admission)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if r, ok := got["/test.v1.S/Declared"]; !ok || r != (Rule{Who: Agent, Budget: Read, Weight: 1}) {
		t.Errorf("the declared RPC's rule = %+v, %v", r, ok)
	}
	if _, ok := got["/test.v1.S/Bare"]; ok {
		t.Error("an RPC without the option has a rule")
	}
}
