package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/store/sqlite"
)

// runBenchSeed is `hub bench-seed`, left out of the usage: it fills a new
// data dir with agents for hubbench's tick scenario, which then runs `hub
// serve` on it and times the orchestrator's ticks. 100,000 CreateAgent
// calls would take minutes and measure registration; the rows are
// bulk-inserted instead (sqlite.SeedAgents). The agents were created an
// hour before the first group is due, so each due one is in the worst
// case: its health changes and it is nudged. Group g (consecutive agent
// IDs from 1, --groups agents each) is due --every after group g-1; group
// 0 --lead after the seeding ends. It prints {"first": <group 0's time>}.
func runBenchSeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hub bench-seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data-dir", "", "a new data dir to seed (required)")
	n := fs.Int("agents", 100_000, "agents to create")
	prefix := fs.String("token-prefix", "", "agent i's token is this prefix and i in 6 digits (required)")
	groups := fs.String("groups", "", "agents due in each group, comma-separated (e.g. 0,1000,1000)")
	every := fs.Duration("every", 5*time.Second, "time between two groups' due times")
	lead := fs.Duration("lead", 20*time.Second, "time from the end of the seeding to group 0's due time")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var sizes []int
	total := 0
	for _, s := range strings.Split(*groups, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		k, err := strconv.Atoi(s)
		if err != nil || k < 0 {
			return fmt.Errorf("--groups: %q is not a number of agents", s)
		}
		sizes, total = append(sizes, k), total+k
	}
	switch {
	case *dir == "" || *prefix == "":
		return fmt.Errorf("--data-dir and --token-prefix are required")
	case *n < 1 || total > *n:
		return fmt.Errorf("--agents %d: give at least 1 and at least the %d the groups need", *n, total)
	case *every <= 0 || *lead <= 0:
		return fmt.Errorf("--every and --lead must be positive")
	}
	path := filepath.Join(*dir, "hub.db")
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists: bench-seed fills a new data dir only", path)
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return err
	}
	// Created an hour before the first group is due (estimated now; the
	// groups' times are set once the rows are in).
	created := time.Now().Add(*lead - time.Hour)
	token := func(i int) string { return fmt.Sprintf("%s%06d", *prefix, i) }
	if err := sqlite.SeedAgents(ctx, path, *n, created, created.Add(25*time.Hour), token); err != nil {
		return fmt.Errorf("seed %d agents: %w", *n, err)
	}
	first := time.Now().Add(*lead)
	lo := 1
	for g, k := range sizes {
		if k == 0 {
			continue
		}
		if err := sqlite.SeedDue(ctx, path, lo, lo+k-1, first.Add(time.Duration(g)*(*every))); err != nil {
			return fmt.Errorf("make group %d due: %w", g, err)
		}
		lo += k
	}
	return json.NewEncoder(stdout).Encode(map[string]string{"first": first.Format(time.RFC3339Nano)})
}
