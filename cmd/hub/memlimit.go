package main

import (
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// The memory limit of `hub serve` (--memory-limit): a soft limit on the Go
// runtime's memory (runtime/debug.SetMemoryLimit), under which the garbage
// collector works harder as the hub's memory nears the limit rather than
// let the heap double past what is live. Left alone the heap grows to about
// twice what is live, and a hub in a container with a memory limit could
// be killed while its live memory fit.

// memoryLimitUsage is the flag's help.
const memoryLimitUsage = "soft limit on the hub's Go memory: a `size` such as 1GiB or 512MiB (B, KiB, MiB, GiB, TiB); " + `"auto": 90% of the memory limit of the hub's cgroup when it has one, else none (GOMEMLIMIT, when set, stands instead); "off": none`

// minMemoryLimit is the smallest limit the flag takes: below it a hub
// would spend its time collecting, and a value this small is most likely
// a size without its unit.
const minMemoryLimit = 32 << 20

// autoShare is the share of the cgroup's limit "auto" sets, leaving room
// for what is not Go's (SQLite's page caches, the binary, thread stacks).
const autoShare = 0.9

// memoryLimit is the value of --memory-limit.
type memoryLimit struct {
	auto  bool
	bytes int64 // with auto false: the limit, math.MaxInt64 for none
}

// String returns the flag's value as given.
func (l *memoryLimit) String() string {
	switch {
	case l == nil || l.auto:
		return "auto"
	case l.bytes == math.MaxInt64:
		return "off"
	}
	return strconv.FormatInt(l.bytes, 10) + "B"
}

// Set parses a value of --memory-limit.
func (l *memoryLimit) Set(v string) error {
	switch strings.TrimSpace(v) {
	case "auto":
		*l = memoryLimit{auto: true}
		return nil
	case "off":
		*l = memoryLimit{bytes: math.MaxInt64}
		return nil
	}
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	if n < minMemoryLimit {
		return fmt.Errorf("%q is below the smallest limit a hub runs under, 32MiB (did the size lose its unit? e.g. 512MiB)", v)
	}
	*l = memoryLimit{bytes: n}
	return nil
}

// sizeUnits are the units of a size, as GOMEMLIMIT takes them.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// parseSize reads a whole number of bytes with an optional unit.
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	shift := uint(0)
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = strings.TrimSpace(num), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf(`%q is not a size: want a whole number with a unit, e.g. 512MiB or 2GiB (B, KiB, MiB, GiB, TiB), "auto" or "off"`, v)
	}
	return n << shift, nil
}

// cgroupMemoryLimit returns the memory limit of the process's cgroup,
// given the cgroup file system at root (/sys/fs/cgroup) and the process's
// /proc/self/cgroup (self): cgroup v2's memory.max of the process's group,
// else cgroup v1's memory.limit_in_bytes of its memory group, each also
// looked for at the top of the mount (a container sees its own group
// there). ok is false when none is readable or the limit is none ("max",
// or v1's near 2^63).
func cgroupMemoryLimit(root fs.FS, self string) (n int64, ok bool) {
	var names []string
	for _, line := range strings.Split(self, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		dir := strings.Trim(parts[2], "/")
		switch {
		case parts[0] == "0" && parts[1] == "":
			names = append(names, path.Join(dir, "memory.max"))
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			names = append(names, path.Join("memory", dir, "memory.limit_in_bytes"))
		}
	}
	names = append(names, "memory.max", "memory/memory.limit_in_bytes")
	for _, name := range names {
		b, err := fs.ReadFile(root, name)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= math.MaxInt64/2 { // v1 writes "none" as about 2^63
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// limit returns the limit to set (math.MaxInt64: none) and where it came
// from, given the cgroup file system at root, the process's cgroups (self)
// and GOMEMLIMIT; set is false
// when the runtime's limit is to stand (auto with GOMEMLIMIT set).
func (l memoryLimit) limit(root fs.FS, self, gomemlimit string) (n int64, from string, set bool) {
	if !l.auto {
		return l.bytes, "--memory-limit", true
	}
	if gomemlimit != "" {
		return 0, "GOMEMLIMIT", false
	}
	if c, ok := cgroupMemoryLimit(root, self); ok {
		return int64(float64(c) * autoShare), fmt.Sprintf("90%% of the cgroup's memory limit (%d bytes)", c), true
	}
	return math.MaxInt64, "no cgroup memory limit", true
}

// applyMemoryLimit sets the runtime's memory limit from l and logs it.
func applyMemoryLimit(l memoryLimit, logger *slog.Logger) {
	self, _ := os.ReadFile("/proc/self/cgroup") // none: the mount's top alone
	n, from, set := l.limit(os.DirFS("/sys/fs/cgroup"), string(self), os.Getenv("GOMEMLIMIT"))
	if set {
		debug.SetMemoryLimit(n)
	} else {
		n = debug.SetMemoryLimit(-1)
	}
	if n == math.MaxInt64 {
		logger.Info("memory limit: none", "from", from)
		return
	}
	logger.Info("memory limit", "bytes", n, "from", from)
}
