package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFloorRun runs `hubbench floor` briefly against the real hub's
// bench-floor: the agents' calls come back answered, the posts come as
// frames on the streams, and the server's CPU is measured.
func TestFloorRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real hub; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"--agents", "40", "--stream", "0.5", "--carried", "60", "--calls", "30", "--posts", "20",
		"--channel-size", "10", "--duration", "6s", "--warmup", "2s", "--hub-cpus", ""}
	if err := runFloor(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("hubbench floor %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	cells := strings.Split(strings.Trim(lines[len(lines)-1], "| "), " | ")
	if len(cells) != 5 || cells[0] != "40" {
		t.Fatalf("the result row is %q, want agents, calls/s, frames/s, cores, µs; stdout:\n%s", lines[len(lines)-1], stdout.String())
	}
	for i, what := range []string{"calls/s", "frames/s", "server CPU"} {
		if v, err := strconv.ParseFloat(cells[i+1], 64); err != nil || v <= 0 {
			t.Errorf("%s = %q, want a positive figure; stdout:\n%s", what, cells[i+1], stdout.String())
		}
	}
}

func TestParseFloorFlagsRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--agents", "0"},
		{"--stream", "1.5"},
		{"--posts", "-1"},
		{"--channel-size", "1"},
		{"--warmup", "10s", "--duration", "5s"},
	} {
		var stdout, stderr bytes.Buffer
		if err := runFloor(context.Background(), args, &stdout, &stderr); err == nil {
			t.Errorf("hubbench floor %s: no error", strings.Join(args, " "))
		}
	}
}
