package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"testing/fstest"
)

func TestMemoryLimitFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want memoryLimit
	}{
		{"auto", memoryLimit{auto: true}},
		{"off", memoryLimit{bytes: math.MaxInt64}},
		{"1GiB", memoryLimit{bytes: 1 << 30}},
		{"512MiB", memoryLimit{bytes: 512 << 20}},
		{"65536KiB", memoryLimit{bytes: 64 << 20}},
		{"2TiB", memoryLimit{bytes: 2 << 40}},
		{"134217728", memoryLimit{bytes: 128 << 20}},
		{"100000000B", memoryLimit{bytes: 100000000}},
	} {
		var l memoryLimit
		if err := l.Set(c.in); err != nil || l != c.want {
			t.Errorf("Set(%q) = %+v, %v; want %+v", c.in, l, err, c.want)
		}
	}
	for _, c := range []struct{ in, says string }{
		{"", "is not a size"},
		{"1.5GiB", "is not a size"},
		{"-1GiB", "is not a size"},
		{"1GB", "is not a size"},
		{"lots", "is not a size"},
		{"99999999999TiB", "is not a size"},
		{"512", "below the smallest limit a hub runs under, 32MiB"},
		{"16MiB", "below the smallest limit"},
	} {
		l := memoryLimit{auto: true}
		err := l.Set(c.in)
		if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "512MiB") {
			t.Errorf("Set(%q) = %v, want an error saying %q and giving an example", c.in, err, c.says)
		}
		if !l.auto {
			t.Errorf("Set(%q) failed but changed the value to %+v", c.in, l)
		}
	}
}

func TestServeRefusesABadMemoryLimit(t *testing.T) {
	var stderr bytes.Buffer
	err := serve(context.Background(), []string{"--data-dir", t.TempDir(), "--memory-limit", "2G"}, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(stderr.String()+err.Error(), `"2G" is not a size`) {
		t.Fatalf("serve --memory-limit 2G = %v (stderr %q), want the flag refused", err, stderr.String())
	}
}

func TestMemoryLimitAuto(t *testing.T) {
	const top = "0::/\n"
	v2 := fstest.MapFS{"memory.max": {Data: []byte("1073741824\n")}}
	v2none := fstest.MapFS{"memory.max": {Data: []byte("max\n")}}
	v2service := fstest.MapFS{
		"memory.max":                          {Data: []byte("max\n")},
		"system.slice/hub.service/memory.max": {Data: []byte("1073741824\n")},
	}
	v1 := fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("2147483648\n")}}
	v1none := fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")}}
	v1group := fstest.MapFS{
		"memory/memory.limit_in_bytes":          {Data: []byte("9223372036854771712\n")},
		"memory/jobs/hub/memory.limit_in_bytes": {Data: []byte("2147483648\n")},
	}
	auto := memoryLimit{auto: true}
	for _, c := range []struct {
		name       string
		l          memoryLimit
		root       fstest.MapFS
		self       string
		gomemlimit string
		want       int64
		set        bool
	}{
		{"cgroup v2 limit", auto, v2, top, "", 966367641, true},
		{"cgroup v2 without a limit", auto, v2none, top, "", math.MaxInt64, true},
		{"cgroup v2, the service's group", auto, v2service, "0::/system.slice/hub.service\n", "", 966367641, true},
		{"cgroup v1 limit", auto, v1, "4:memory:/\n", "", 1932735283, true},
		{"cgroup v1 without a limit", auto, v1none, "4:memory:/\n", "", math.MaxInt64, true},
		{"cgroup v1, the process's group", auto, v1group, "5:cpu,cpuacct:/\n4:memory:/jobs/hub\n0::/\n", "", 1932735283, true},
		{"no cgroup", auto, fstest.MapFS{}, "", "", math.MaxInt64, true},
		{"GOMEMLIMIT stands", auto, v2, top, "800MiB", 0, false},
		{"the flag over GOMEMLIMIT and the cgroup", memoryLimit{bytes: 256 << 20}, v2, top, "800MiB", 256 << 20, true},
		{"off", memoryLimit{bytes: math.MaxInt64}, v2, top, "", math.MaxInt64, true},
	} {
		n, from, set := c.l.limit(c.root, c.self, c.gomemlimit)
		if n != c.want || set != c.set || from == "" {
			t.Errorf("%s: limit = %d (%s), set %v; want %d, set %v", c.name, n, from, set, c.want, c.set)
		}
	}
}
