// Package version holds the version string of the hub's binaries. It imports
// nothing, so the API client hubctl can print it without linking the server.
package version

// Version is set at build time with
// -ldflags "-X github.com/agenthub/hub/internal/version.Version=v1.2.3".
var Version = "dev"
