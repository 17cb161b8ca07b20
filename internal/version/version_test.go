package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// buildInfo parses build info as `go version -m` prints it.
func buildInfo(t *testing.T, text string) *debug.BuildInfo {
	t.Helper()
	bi, err := debug.ParseBuildInfo(text)
	if err != nil {
		t.Fatalf("parse build info: %v", err)
	}
	return bi
}

func TestFromBuildInfo(t *testing.T) {
	t.Parallel()
	// checkout is the build info of a go build in a git checkout.
	checkout := func(mainVersion string, modified bool) string {
		return fmt.Sprintf("go\tgo1.26.8\npath\tgithub.com/agenthub/hub/cmd/hub\nmod\tgithub.com/agenthub/hub\t%s\t\n"+
			"build\tvcs=git\nbuild\tvcs.revision=46dc051e0a1b2c3d4e5f60718293a4b5c6d7e8f9\n"+
			"build\tvcs.time=2026-11-27T13:20:00Z\nbuild\tvcs.modified=%t\n", mainVersion, modified)
	}
	tests := []struct {
		name                  string
		info                  string
		version, commit, date string // what -ldflags set ("dev", "", "": nothing)
		wantV, wantC, wantD   string
	}{
		{
			name:    "go build in a clean checkout",
			info:    checkout("v0.0.0-20261127132000-46dc051e0a1b", false),
			version: "dev",
			wantV:   "v0.0.0-20261127132000-46dc051e0a1b", wantC: "46dc051e0a1b2c3d4e5f60718293a4b5c6d7e8f9", wantD: "2026-11-27T13:20:00Z",
		},
		{
			name:    "go build in a checkout with changes",
			info:    checkout("v0.0.0-20261127132000-46dc051e0a1b+dirty", true),
			version: "dev",
			wantV:   "v0.0.0-20261127132000-46dc051e0a1b+dirty", wantC: "46dc051e0a1b2c3d4e5f60718293a4b5c6d7e8f9-dirty", wantD: "2026-11-27T13:20:00Z",
		},
		{
			name:    "go install of a release",
			info:    "go\tgo1.26.8\npath\tgithub.com/agenthub/hub/cmd/hub\nmod\tgithub.com/agenthub/hub\tv1.2.3\th1:abc=\n",
			version: "dev",
			wantV:   "v1.2.3", wantC: "", wantD: "",
		},
		{
			name:    "go install of a commit (pseudo-version)",
			info:    "go\tgo1.26.8\npath\tgithub.com/agenthub/hub/cmd/hub\nmod\tgithub.com/agenthub/hub\tv1.2.4-0.20261127132000-46dc051e0a1b\th1:abc=\n",
			version: "dev",
			wantV:   "v1.2.4-0.20261127132000-46dc051e0a1b", wantC: "46dc051e0a1b", wantD: "2026-11-27T13:20:00Z",
		},
		{
			name:    "go build without VCS stamping (-buildvcs=false)",
			info:    "go\tgo1.26.8\npath\tgithub.com/agenthub/hub/cmd/hub\nmod\tgithub.com/agenthub/hub\t(devel)\t\n",
			version: "dev",
			wantV:   "dev", wantC: "", wantD: "",
		},
		{
			name:    "a release's -ldflags win over the build info",
			info:    checkout("v0.0.0-20261127132000-46dc051e0a1b", false),
			version: "v1.2.3", commit: "0123abcd", date: "2026-12-01T00:00:00Z",
			wantV: "v1.2.3", wantC: "0123abcd", wantD: "2026-12-01T00:00:00Z",
		},
		{
			name:    "-ldflags with the version only: commit and date from the checkout",
			info:    checkout("(devel)", false),
			version: "v1.2.3",
			wantV:   "v1.2.3", wantC: "46dc051e0a1b2c3d4e5f60718293a4b5c6d7e8f9", wantD: "2026-11-27T13:20:00Z",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, c, d := fromBuildInfo(tt.version, tt.commit, tt.date, buildInfo(t, tt.info))
			if v != tt.wantV || c != tt.wantC || d != tt.wantD {
				t.Errorf("got (%q, %q, %q), want (%q, %q, %q)", v, c, d, tt.wantV, tt.wantC, tt.wantD)
			}
		})
	}
}

func TestLong(t *testing.T) {
	t.Parallel()
	got := long("hub", "v1.2.3", "0123abcd", "2026-12-01T00:00:00Z")
	want := "hub v1.2.3\n  commit  0123abcd\n  built   2026-12-01T00:00:00Z\n  go      " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got != want {
		t.Errorf("Long:\n%s\nwant:\n%s", got, want)
	}

	got = long("hubctl", "dev", "", "")
	for _, line := range []string{"hubctl dev\n", "  commit  unknown\n", "  built   unknown\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("Long without build info = %q, want the line %q", got, line)
		}
	}
}

// The version is what -ldflags set filled from the build info, read at
// the first call that asks (there is no package initialisation to do it).
func TestVersionIsReadAtFirstUse(t *testing.T) {
	t.Parallel()
	wantV, wantC, wantD := version, commit, date
	if bi, ok := debug.ReadBuildInfo(); ok {
		wantV, wantC, wantD = fromBuildInfo(version, commit, date, bi)
	}
	if v, c, d := Version(), Commit(), Date(); v != wantV || c != wantC || d != wantD {
		t.Errorf("Version, Commit, Date = %q, %q, %q; want %q, %q, %q", v, c, d, wantV, wantC, wantD)
	}
	if got := Long("hub"); got != long("hub", wantV, wantC, wantD) {
		t.Errorf("Long = %q, want the version read", got)
	}
}
