package faults

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The rig's network: one namespace holds a bridge, and every node (the
// database, each replica, the clients) is a namespace of its own joined to
// that bridge by a veth pair. Addresses are in 10.99.0.0/24 and exist only
// inside the rig's namespaces: nothing outside them is ever a target, and
// the host's own namespace gains no interface or address.
const (
	subnet    = "10.99.0"
	pgAddr    = subnet + ".2"   // PostgreSQL
	proxyAddr = subnet + ".3"   // the fault proxy (a second address of the clients' namespace)
	clientIP  = subnet + ".100" // the clients' own address (the source of every connection they make)
	pgPort    = 5432
	grpcPort  = 7700
	httpPort  = 7701
)

// nsPrefix starts the name of every namespace the rig makes; the PID of
// the test that made them follows, so that a later run can tell a stale
// rig (its test is gone) from one in use.
const nsPrefix = "hubf"

// replicaAddr is the address of replica i (1-based).
func replicaAddr(i int) string { return fmt.Sprintf("%s.%d", subnet, 10+i) }

// rig names the namespaces of one rig.
type rig struct {
	prefix   string // hubf<pid>
	replicas int
}

func newRig(replicas int) *rig {
	return &rig{prefix: fmt.Sprintf("%s%d", nsPrefix, os.Getpid()), replicas: replicas}
}

func (r *rig) ns(node string) string { return r.prefix + "-" + node }

// nodes are the namespaces joined to the bridge, with their addresses.
func (r *rig) nodes() []struct{ name, addr string } {
	out := []struct{ name, addr string }{{"pg", pgAddr}, {"cl", clientIP}}
	for i := 1; i <= r.replicas; i++ {
		out = append(out, struct{ name, addr string }{fmt.Sprintf("r%d", i), replicaAddr(i)})
	}
	return out
}

// run runs a command and returns its error with its output.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// up builds the rig's namespaces, bridge and links. On an error the
// caller tears down what was made (down removes whatever exists).
func (r *rig) up() error {
	net := r.ns("net")
	steps := [][]string{
		{"ip", "netns", "add", net},
		{"ip", "-n", net, "link", "set", "lo", "up"},
		{"ip", "-n", net, "link", "add", "br0", "type", "bridge"},
		{"ip", "-n", net, "link", "set", "br0", "up"},
	}
	for _, n := range r.nodes() {
		ns := r.ns(n.name)
		steps = append(steps,
			[]string{"ip", "netns", "add", ns},
			[]string{"ip", "-n", ns, "link", "set", "lo", "up"},
			[]string{"ip", "-n", net, "link", "add", "v-" + n.name, "type", "veth", "peer", "name", "eth0", "netns", ns},
			[]string{"ip", "-n", net, "link", "set", "v-" + n.name, "master", "br0", "up"},
			[]string{"ip", "-n", ns, "addr", "add", n.addr + "/24", "dev", "eth0"},
			[]string{"ip", "-n", ns, "link", "set", "eth0", "up"},
		)
	}
	// The proxy's address is a second one of the clients' namespace (the
	// test process, proxy included, runs there); the clients' own address
	// stays the source of the connections they and the proxy make.
	steps = append(steps, []string{"ip", "-n", r.ns("cl"), "addr", "add", proxyAddr + "/24", "dev", "eth0"})
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return fmt.Errorf("build the rig: %w", err)
		}
	}
	return nil
}

// down kills every process left in the rig's namespaces, by PID, and
// removes the namespaces (the bridge and veths go with them). It returns
// the PIDs it had to kill.
func (r *rig) down() ([]int, error) {
	return removeNamespaces(func(name string) bool { return strings.HasPrefix(name, r.prefix+"-") })
}

// removeNamespaces kills the processes of every namespace whose name
// match accepts, then deletes those namespaces.
func removeNamespaces(match func(string) bool) ([]int, error) {
	names, err := listNamespaces()
	if err != nil {
		return nil, err
	}
	var killed []int
	var errs []string
	for _, name := range names {
		if !match(name) {
			continue
		}
		pids := namespacePIDs(name)
		for _, pid := range pids {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = append(killed, pid)
			}
		}
		waitGone(pids, 5*time.Second)
		if err := run("ip", "netns", "del", name); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return killed, fmt.Errorf("remove namespaces: %s", strings.Join(errs, "; "))
	}
	return killed, nil
}

// removeStale removes the rigs whose test process is gone (a run killed
// before its clean-up), and reports their namespaces.
func removeStale() ([]string, error) {
	names, err := listNamespaces()
	if err != nil {
		return nil, err
	}
	var stale []string
	owners := map[string]bool{}
	for _, name := range names {
		if owner, ok := staleOwner(name); ok {
			stale = append(stale, name)
			owners[owner] = true
		}
	}
	if len(stale) == 0 {
		return nil, nil
	}
	_, err = removeNamespaces(func(name string) bool {
		owner, ok := staleOwner(name)
		return ok && owners[owner]
	})
	return stale, err
}

var rigNameRE = regexp.MustCompile(`^` + nsPrefix + `(\d+)-[a-z0-9]+$`)

// staleOwner returns the prefix of name's rig if name is a rig namespace
// whose test process no longer runs.
func staleOwner(name string) (string, bool) {
	m := rigNameRE.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	pid, _ := strconv.Atoi(m[1])
	if pid == os.Getpid() {
		return "", false
	}
	if syscall.Kill(pid, 0) == nil {
		return "", false // its test still runs
	}
	return nsPrefix + m[1], true
}

// listNamespaces returns the names of the named network namespaces.
func listNamespaces() ([]string, error) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return nil, fmt.Errorf("ip netns list: %w", err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// namespacePIDs returns the PIDs of the processes in namespace name.
func namespacePIDs(name string) []int {
	out, _ := exec.Command("ip", "netns", "pids", name).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGone waits until none of pids exists (or limit passes).
func waitGone(pids []int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// canMakeNamespaces reports why this machine cannot run the rig, or "".
func canMakeNamespaces() string {
	if os.Geteuid() != 0 {
		return "the fault rig needs root (network namespaces, nftables)"
	}
	for _, tool := range []string{"ip", "nft", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("%s is missing (scripts/faults.sh installs iproute2, nftables and util-linux)", tool)
		}
	}
	probe := fmt.Sprintf("%s%d-probe", nsPrefix, os.Getpid())
	if err := run("ip", "netns", "add", probe); err != nil {
		return fmt.Sprintf("cannot create a network namespace here: %v", err)
	}
	defer run("ip", "netns", "del", probe)
	if err := run("ip", "-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1"); err != nil {
		return fmt.Sprintf("cannot create a veth pair in a network namespace: %v", err)
	}
	if err := run("ip", "netns", "exec", probe, "nft", "add", "table", "inet", "probe"); err != nil {
		return fmt.Sprintf("cannot use nftables in a network namespace: %v", err)
	}
	return ""
}

// The partitions are nftables rules in a node's namespace, in a table of
// their own that healing deletes whole.
const nftTable = "faults"

// partition drops, in node's namespace, the packets node sends to (out)
// and receives from (in) the given peers; each peer is an address, or
// address:port for TCP to or from that port.
func (r *rig) partition(node string, peers []string, in, out bool) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "table inet %s {\n", nftTable)
	sb.WriteString("  chain input { type filter hook input priority -10; policy accept;\n")
	if in {
		for _, p := range peers {
			sb.WriteString("    " + match(p, "saddr", "sport") + " drop\n")
		}
	}
	sb.WriteString("  }\n  chain output { type filter hook output priority -10; policy accept;\n")
	if out {
		for _, p := range peers {
			sb.WriteString("    " + match(p, "daddr", "dport") + " drop\n")
		}
	}
	sb.WriteString("  }\n}\n")
	cmd := exec.Command("ip", "netns", "exec", r.ns(node), "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(sb.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft in %s: %v: %s\n%s", node, err, out, sb.String())
	}
	return nil
}

// match is the nftables match of one peer.
func match(peer, addrKey, portKey string) string {
	if host, port, ok := strings.Cut(peer, ":"); ok {
		return fmt.Sprintf("ip %s %s tcp %s %s", addrKey, host, portKey, port)
	}
	return fmt.Sprintf("ip %s %s", addrKey, peer)
}

// heal removes node's partition rules, if any.
func (r *rig) heal(node string) error {
	out, err := exec.Command("ip", "netns", "exec", r.ns(node), "nft", "delete", "table", "inet", nftTable).CombinedOutput()
	if err != nil && !bytes.Contains(out, []byte("No such file")) {
		return fmt.Errorf("heal %s: %v: %s", node, err, out)
	}
	return nil
}
