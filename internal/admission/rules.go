// Package admission decides whether a call may run, in one place for every
// entry point of the hub: the gRPC server's tap and interceptors, the REST
// guard, the dashboard's stream and MCP over HTTP. It reads each RPC's
// admission (who may make it, which budget it draws from) from the
// option the protos declare on the RPC, checks the caller's credential
// with the texts of its refusals, and keeps the budgets themselves
// (per-agent token buckets, the slots searches share, the join budgets).
package admission

import (
	"fmt"
	"strings"
	"sync"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Who is a set of kinds of caller: who may make a call.
type Who uint8

const (
	// Agent calls act as the agent whose token they carry.
	Agent Who = 1 << iota
	// Admin calls carry the admin token.
	Admin
	// Joiner calls carry a join code as their credential (JoinHub): the
	// caller becomes an agent by the call.
	Joiner
	// Person calls carry the admin token or a person token (people in
	// the loop: answer the inbox, post, read), never an agent's.
	Person
)

// Has reports whether k is one of w's kinds.
func (w Who) Has(k Who) bool { return w&k != 0 }

func (w Who) String() string {
	var names []string
	for _, k := range []struct {
		w    Who
		name string
	}{{Agent, "agent"}, {Person, "person"}, {Admin, "admin"}, {Joiner, "joiner"}} {
		if w.Has(k.w) {
			names = append(names, k.name)
		}
	}
	if len(names) == 0 {
		return "nobody"
	}
	return strings.Join(names, " or ")
}

// Budget is what a call draws from before it runs.
type Budget uint8

const (
	// None: the call is bounded otherwise (an admin call, a wait, whose
	// number is capped by the waiter limits, is on Read).
	None Budget = iota
	// Write is the caller's budget of writes (--rate-limit).
	Write
	// Read is the caller's budget of reads (--read-rate-limit).
	Read
	// Search is the caller's budget of searches (--search-rate-limit),
	// and a search also takes one of the slots that searches share, so
	// that searching never takes every connection reads need.
	Search
)

func (b Budget) String() string {
	switch b {
	case Write:
		return "writes"
	case Read:
		return "reads"
	case Search:
		return "searches"
	}
	return "none"
}

// Rule is a call's admission: who may make it, which budget it draws
// from, and how many of the budget's tokens one call takes.
type Rule struct {
	Who    Who
	Budget Budget
	Weight int
	// Parks marks the long poll: its handler admits it with Gate.Admit
	// itself, before the interceptors run (see server.waitForMessages),
	// so the interceptor lets it through as admitted.
	Parks bool
}

// rules returns the admission of every RPC of the hub's services, by full
// method name, read from the option (hub.v1.admission) of each RPC at the
// first call (not at start: a hook or guard run, which admits nothing,
// does not pay for it), and the error naming the RPCs that have none
// (Check).
var rules = sync.OnceValues(func() (map[string]Rule, error) { return Load(hubFiles()...) })

// hubFiles returns the descriptors of the files of the hub's API.
func hubFiles() []protoreflect.FileDescriptor {
	var files []protoreflect.FileDescriptor
	protoregistry.GlobalFiles.RangeFilesByPackage(hubv1.File_hub_v1_admission_proto.Package(), func(fd protoreflect.FileDescriptor) bool {
		files = append(files, fd)
		return true
	})
	return files
}

// Check reports an RPC of the hub's services that declares no admission,
// or one whose admission cannot be followed: the hub does not start then.
func Check() error {
	_, err := rules()
	return err
}

// Load returns the admission of every RPC of the services of files, by
// full method name, from their option (hub.v1.admission). An RPC without
// the option, or with one naming no caller, an unknown kind of caller or
// a budget without a weight, is an error naming it; the rules of the
// others are returned with it.
func Load(files ...protoreflect.FileDescriptor) (map[string]Rule, error) {
	m := map[string]Rule{}
	var bad []string
	for _, fd := range files {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				method := "/" + string(sd.FullName()) + "/" + string(md.Name())
				r, err := rule(md)
				if err != nil {
					bad = append(bad, method+": "+err.Error())
					continue
				}
				m[method] = r
			}
		}
	}
	if len(bad) > 0 {
		return m, fmt.Errorf("admission: %s (declare it on the RPC in proto/hub/v1: option (hub.v1.admission) = {who: [...], budget: ..., weight: ...})", strings.Join(bad, "; "))
	}
	return m, nil
}

// rule is the Rule an RPC's option declares.
func rule(md protoreflect.MethodDescriptor) (Rule, error) {
	opts := md.Options()
	if opts == nil || !proto.HasExtension(opts, hubv1.E_Admission) {
		return Rule{}, fmt.Errorf("no admission option")
	}
	a := proto.GetExtension(opts, hubv1.E_Admission).(*hubv1.Admission)
	var r Rule
	for _, c := range a.GetWho() {
		k, ok := map[hubv1.Caller]Who{hubv1.Caller_CALLER_AGENT: Agent, hubv1.Caller_CALLER_PERSON: Person, hubv1.Caller_CALLER_ADMIN: Admin, hubv1.Caller_CALLER_JOINER: Joiner}[c]
		if !ok {
			return Rule{}, fmt.Errorf("who names %v, not a kind of caller", c)
		}
		r.Who |= k
	}
	switch {
	case r.Who == 0:
		return Rule{}, fmt.Errorf("who names no caller")
	case r.Who.Has(Joiner) && r.Who != Joiner:
		return Rule{}, fmt.Errorf("a join names no other caller: its credential is a join code")
	}
	r.Budget = map[hubv1.Budget]Budget{hubv1.Budget_BUDGET_WRITE: Write, hubv1.Budget_BUDGET_READ: Read, hubv1.Budget_BUDGET_SEARCH: Search}[a.GetBudget()]
	r.Weight = int(a.GetWeight())
	switch {
	case r.Budget != None && r.Weight < 1:
		return Rule{}, fmt.Errorf("budget %v with weight %d: a call takes at least 1", r.Budget, r.Weight)
	case r.Who.Has(Agent) && r.Budget == None:
		return Rule{}, fmt.Errorf("an agent may make it without a budget: name the budget it draws from")
	}
	r.Parks = a.GetParks()
	if r.Parks && (md.IsStreamingClient() || md.IsStreamingServer()) {
		return Rule{}, fmt.Errorf("a parking call must be unary")
	}
	return r, nil
}

// Lookup returns the admission of the RPC named by its full method name
// ("/hub.v1.AgentService/PostMessage"); ok is false for a method no
// service declares, which no entry point admits.
func Lookup(fullMethod string) (r Rule, ok bool) {
	all, _ := rules()
	r, ok = all[fullMethod]
	return r, ok
}

// OTLPExport is the admission of an export of an agent's host's own
// telemetry to the hub's OTLP receiver (/otlp/v1/metrics, logs, traces),
// the one entry point that stands for no RPC: the agent's token, one write
// of its budget (a host exports every few seconds at most).
var OTLPExport = Rule{Who: Agent, Budget: Write, Weight: 1}
