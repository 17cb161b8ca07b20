// Package version holds what the hub's binaries know of their build: the
// version, the commit and the build date. It imports only the standard
// library, so the API client hubctl can print it without linking the server.
//
// A release sets all three with -ldflags:
//
//	-X github.com/agenthub/hub/internal/version.version=v1.2.3
//	-X github.com/agenthub/hub/internal/version.commit=0123abc…
//	-X github.com/agenthub/hub/internal/version.date=2026-01-31T12:00:00Z
//
// A build without them takes what the Go toolchain recorded instead
// (runtime/debug.ReadBuildInfo), at the first call that asks, so a binary
// that never prints its version (a hook's run of the hub) does not read it.
package version

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// What -ldflags set: the release, the commit and the build date ("dev",
// "", "" when unset).
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// build is the version, the commit and the date: those -ldflags set,
// filled from the build info.
var build = sync.OnceValue(func() [3]string {
	v, c, d := version, commit, date
	if bi, ok := debug.ReadBuildInfo(); ok {
		v, c, d = fromBuildInfo(v, c, d, bi)
	}
	return [3]string{v, c, d}
})

// Version is the release (v1.2.3), a Go pseudo-version for a build from a
// commit, or "dev".
func Version() string { return build()[0] }

// Commit is the git commit the binary was built from ("" when unknown),
// with "-dirty" when the work tree had changes.
func Commit() string { return build()[1] }

// Date is when the binary was built or, for a build from a checkout, when
// its commit was made (RFC 3339; "" when unknown).
func Date() string { return build()[2] }

// pseudoVersion matches a Go pseudo-version (v0.0.0-20260131120000-0123456789ab
// and its variants), capturing the commit time and the short commit.
var pseudoVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v\d+\.\d+\.\d+-(?:.*\.)?(\d{14})-([0-9a-f]{12})(?:\+.*)?$`)
})

// fromBuildInfo fills what -ldflags left unset (version "dev", commit and
// date "") from the build info: the main module's version, else nothing;
// the vcs.revision, vcs.modified and vcs.time settings of a build in a git
// checkout, else the commit and time a pseudo-version carries.
func fromBuildInfo(version, commit, date string, bi *debug.BuildInfo) (string, string, string) {
	if version == "dev" {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
	}
	var revision, modified, vcsTime string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			vcsTime = s.Value
		}
	}
	if m := pseudoVersion().FindStringSubmatch(bi.Main.Version); m != nil {
		if revision == "" {
			revision = m[2]
		}
		if vcsTime == "" {
			t := m[1]
			vcsTime = t[0:4] + "-" + t[4:6] + "-" + t[6:8] + "T" + t[8:10] + ":" + t[10:12] + ":" + t[12:14] + "Z"
		}
	}
	if commit == "" && revision != "" {
		commit = revision
		if modified == "true" {
			commit += "-dirty"
		}
	}
	if date == "" {
		date = vcsTime
	}
	return version, commit, date
}

// Long is what `hub version` and `hubctl version` print: the program's
// name and version on the first line, then the commit, the build date and
// the Go version with the platform, one per line.
func Long(program string) string {
	b := build()
	return long(program, b[0], b[1], b[2])
}

// long is Long for the given version, commit and date.
func long(program, version, commit, date string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", program, version)
	fmt.Fprintf(&b, "  commit  %s\n", orUnknown(commit))
	fmt.Fprintf(&b, "  built   %s\n", orUnknown(date))
	fmt.Fprintf(&b, "  go      %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
