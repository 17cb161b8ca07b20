package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestBenchFloorServesLoopbackOnly: bench-floor answers anyone with no
// token, so it refuses any address but loopback, and a channel of no one.
func TestBenchFloorServesLoopbackOnly(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--grpc-addr", "0.0.0.0:0"}, "loopback address only"},
		{[]string{"--grpc-addr", ":0"}, "loopback address only"},
		{[]string{"--grpc-addr", "127.0.0.1:0", "--channel-members", "0"}, "at least 1"},
	} {
		var stderr bytes.Buffer
		err := runBenchFloor(context.Background(), c.args, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hub bench-floor %s: %v, want an error saying %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}
