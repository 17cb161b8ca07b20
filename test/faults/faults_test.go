// Package faults is the fault rig of the replicated mode: PostgreSQL, two
// or three hub replicas and the clients, each in a network namespace of
// its own on a private bridge; a nemesis that kills replicas, stops and
// crashes PostgreSQL, partitions links with nftables (both ways and one
// way) and poisons them through a fault proxy (toxiproxy: latency,
// bandwidth, stalls, resets), on a schedule drawn from a seed; a workload
// of agents posting, waiting, acknowledging, heartbeating and reserving
// through every replica, each call recorded; and a checker that reads the
// history and the final store.
//
// It needs root and runs only when asked:
//
//	scripts/faults.sh --duration 30m --seed 7     # the long run
//	scripts/ci-faults.sh                          # CI's short run (fixed seeds)
//	HUB_FAULTS=1 go test -v -timeout 0 ./test/faults -args -faults.seeds 1,2 -faults.run 60s
//
// A run ends with one line:
//
//	faults: runs=N faults=N acked=N unknown=N lost=N duplicated=N reordered=N leader_overlaps=N converge_p99_ms=N
//
// and the test fails when any check failed. A failing seed reproduces its
// schedule of faults: -faults.seeds S.
package faults

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	durationFlag = flag.Duration("faults.duration", 0, "total time of faults over all runs (default $FAULTS_DURATION, else one run)")
	runFlag      = flag.Duration("faults.run", 2*time.Minute, "time of faults in each run (the run then drains and checks)")
	seedFlag     = flag.Uint64("faults.seed", 1, "seed of the first run; the next runs take the next seeds")
	seedsFlag    = flag.String("faults.seeds", "", "comma-separated seeds, one run each (instead of -faults.seed and -faults.duration)")
	replicasFlag = flag.Int("faults.replicas", 3, "hub replicas (2 or 3)")
	agentsFlag   = flag.Int("faults.agents", 6, "workload agents")
	kindsFlag    = flag.String("faults.kinds", "", "comma-separated fault kinds to draw from (default every kind)")
	summaryFlag  = flag.String("faults.summary", "", "also write the summary line to this file")
	reportFlag   = flag.String("faults.report", "", "write every run's result (JSON) to this file")
	keepFlag     = flag.Bool("faults.keep", false, "keep every run's files (logs of PostgreSQL and the replicas, results)")
)

func TestFaults(t *testing.T) {
	if path := os.Getenv("HUB_FAULTS_RUN"); path != "" {
		b, err := os.ReadFile(path)
		must(t, err)
		var cfg runConfig
		must(t, json.Unmarshal(b, &cfg))
		runChild(t, cfg)
		return
	}
	if os.Getenv("HUB_FAULTS") != "1" {
		t.Skip("the fault rig runs with HUB_FAULTS=1, as root: scripts/faults.sh")
	}
	if why := canMakeNamespaces(); why != "" {
		if os.Getenv("HUB_FAULTS_REQUIRE") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	if stale, err := removeStale(); err != nil {
		t.Fatalf("remove a stale rig: %v", err)
	} else if len(stale) > 0 {
		t.Logf("removed the namespaces of a stale rig: %s", strings.Join(stale, " "))
	}
	kinds := faultKinds
	if *kindsFlag != "" {
		kinds = strings.Split(*kindsFlag, ",")
		for _, k := range kinds {
			if !slices.Contains(faultKinds, k) {
				t.Fatalf("-faults.kinds: unknown kind %q (kinds: %s)", k, strings.Join(faultKinds, ","))
			}
		}
	}
	if *replicasFlag < 2 || *replicasFlag > 3 {
		t.Fatalf("-faults.replicas %d: the rig runs 2 or 3 replicas", *replicasFlag)
	}
	seeds := planSeeds(t)
	// Not t.TempDir (0700): PostgreSQL runs as its own user under it.
	dir, err := os.MkdirTemp("", "hub-faults-")
	must(t, err)
	t.Cleanup(func() {
		if *keepFlag {
			t.Logf("the runs' files are in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	must(t, os.Chmod(dir, 0o755))
	hubBin, err := buildHub(dir)
	must(t, err)

	r := newRig(*replicasFlag)
	t.Cleanup(func() {
		killed, err := r.down()
		if err != nil {
			t.Errorf("tear the rig down: %v", err)
		}
		if len(killed) > 0 {
			t.Logf("tear-down killed processes left in the rig: %v", killed)
		}
	})
	if err := r.up(); err != nil {
		t.Fatal(err)
	}

	var results []*result
	for k, seed := range seeds {
		runDir := filepath.Join(dir, fmt.Sprintf("run%d-seed%d", k+1, seed))
		must(t, os.MkdirAll(runDir, 0o755))
		cfg := runConfig{Prefix: r.prefix, Replicas: *replicasFlag, Agents: *agentsFlag, Seed: seed, Duration: *runFlag,
			HubBin: hubBin, Dir: runDir, Result: filepath.Join(runDir, "result.json"), Kinds: kinds}
		res, err := runOne(r, cfg)
		if err != nil {
			t.Errorf("run %d (seed %d): %v", k+1, seed, err)
			keepLogs(t, runDir)
			continue
		}
		results = append(results, res)
		fmt.Printf("faults: run %d seed %d: %d faults; %s\n", k+1, seed, len(res.Faults), res.detail())
		for _, p := range res.Problems {
			t.Errorf("seed %d: %s", seed, p)
		}
		if res.failures() > 0 {
			t.Errorf("seed %d failed its checks (rerun it with -faults.seeds %d)", seed, seed)
			keepLogs(t, runDir)
		}
	}
	report(t, results)
	// The first problems of each failed run again, next to the summary:
	// CI keeps only the end of the output.
	for _, res := range results {
		if res.failures() == 0 {
			continue
		}
		for i, p := range res.Problems[:min(3, len(res.Problems))] {
			fmt.Printf("faults: seed %d problem %d of %d: %s\n", res.Seed, i+1, len(res.Problems), p)
		}
	}
	line := summary(len(results), results)
	if *summaryFlag != "" {
		must(t, os.WriteFile(*summaryFlag, []byte(line+"\n"), 0o644))
	}
	fmt.Println(line)
}

// planSeeds returns the seeds of the runs asked for.
func planSeeds(t *testing.T) []uint64 {
	if *seedsFlag != "" {
		var out []uint64
		for _, s := range strings.Split(*seedsFlag, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil {
				t.Fatalf("-faults.seeds: %q is not a seed", s)
			}
			out = append(out, n)
		}
		return out
	}
	total := *durationFlag
	if total == 0 {
		if d, err := time.ParseDuration(os.Getenv("FAULTS_DURATION")); err == nil {
			total = d
		}
	}
	runs := 1
	if total > *runFlag {
		runs = int((total + *runFlag - 1) / *runFlag)
	}
	var out []uint64
	for k := range runs {
		out = append(out, *seedFlag+uint64(k))
	}
	return out
}

// runOne runs cfg in a child process inside the clients' namespace and
// returns its result.
func runOne(r *rig, cfg runConfig) (*result, error) {
	path := filepath.Join(cfg.Dir, "config.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("ip", "netns", "exec", r.ns("cl"), exe, "-test.run=^TestFaults$", "-test.v", "-test.timeout=0", "-test.count=1")
	cmd.Env = append(os.Environ(), "HUB_FAULTS_RUN="+path)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	runErr := cmd.Run()
	// Whatever the child left running in the rig (it stops its processes
	// itself, unless it crashed) is killed before the next run.
	for _, n := range r.nodes() {
		if n.name == "cl" {
			continue
		}
		for _, pid := range namespacePIDs(r.ns(n.name)) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				fmt.Printf("faults: killed PID %d left in %s\n", pid, n.name)
			}
		}
		r.heal(n.name)
	}
	b, err = os.ReadFile(cfg.Result)
	if err != nil {
		return nil, fmt.Errorf("no result (%v): the run failed", runErr)
	}
	var res result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, err
	}
	if runErr != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("the run's own checks failed: %v", runErr))
		res.NotConverged++
	}
	return &res, nil
}

// keepLogs copies a failed run's logs out of the test's temporary
// directory, which is removed at the end.
func keepLogs(t *testing.T, runDir string) {
	dst, err := os.MkdirTemp("", "hub-faults-logs-")
	if err != nil {
		return
	}
	files, _ := filepath.Glob(filepath.Join(runDir, "*.log"))
	files = append(files, filepath.Join(runDir, "pg", "postgres.log"), filepath.Join(runDir, "result.json"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644)
		}
	}
	t.Logf("the failed run's logs are in %s", dst)
}

// report logs the figures by fault kind and writes every result to
// -faults.report.
func report(t *testing.T, results []*result) {
	byKind := map[string][]*fault{}
	for _, r := range results {
		for _, f := range r.Faults {
			byKind[f.Kind] = append(byKind[f.Kind], f)
		}
	}
	var kinds []string
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		var conv, fail []time.Duration
		bad, othersOK, othersNot := 0, 0, 0
		for _, f := range byKind[k] {
			othersOK += f.OthersOK
			othersNot += f.OthersNot
			if f.ConvergeErr != "" {
				bad++
			} else {
				conv = append(conv, f.Converge)
			}
			if f.Failover > 0 {
				fail = append(fail, f.Failover)
			}
		}
		line := fmt.Sprintf("faults: kind %-20s n=%-3d converge p50=%dms p99=%dms not_converged=%d other_replicas_posts ok=%d not=%d", k, len(byKind[k]),
			percentile(conv, 50).Milliseconds(), percentile(conv, 99).Milliseconds(), bad, othersOK, othersNot)
		if k == "leader-isolate" {
			line += fmt.Sprintf(" failovers=%d/%d p50=%dms", len(fail), len(byKind[k]), percentile(fail, 50).Milliseconds())
		}
		fmt.Println(line)
	}
	if *reportFlag != "" {
		b, _ := json.MarshalIndent(results, "", " ")
		if err := os.WriteFile(*reportFlag, b, 0o644); err != nil {
			t.Errorf("write the report: %v", err)
		}
	}
}
