package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// TestQuickRunPostgres runs hubbench --database-url with two replicas on a
// fresh database, at tiny sizes, and checks that every figure is reported;
// it asserts no timing.
func TestQuickRunPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real hub; skipped with -short")
	}
	url := pgtest.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"--database-url", url, "--replicas", "2", "--quick", "--nice", "0", "--waiters", "1,5", "--memory-waiters", "10",
		"--samples", "5", "--idle", "300ms", "--settle", "100ms", "--duration", "300ms", "--senders", "4"}
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("hubbench %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`\| 1 \| [0-9]+ \| [0-9.]+ [µm]?s \|`),
		regexp.MustCompile(`\| 2 \| [0-9]+ \| [0-9.]+ [µm]?s \|`),
		regexp.MustCompile(`\| 5 \| a \| 5 \| [0-9.]+ [µm]?s \|`),
		regexp.MustCompile(`\| 1 \| b \| 5 \| [0-9.]+ [µm]?s \|`),
		regexp.MustCompile(`\| 10 \| [0-9.]+ \| 0 \|`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the report has no line matching %s\nreport:\n%s\nstderr:\n%s", want, out, stderr.String())
		}
	}
}

func TestParseFlagsRejectsNoReplicas(t *testing.T) {
	var stderr bytes.Buffer
	if _, err := parseFlags([]string{"--database-url", "postgres://x/y", "--replicas", "0"}, &stderr); err == nil {
		t.Error("--replicas 0 was accepted")
	}
}
