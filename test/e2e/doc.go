// Package e2e holds end-to-end tests of the real binaries: they build `hub`
// and `hubctl` with `go build`, start the hub on loopback ports with a
// temporary data dir, and drive it with hubctl and plain HTTP, the way a
// user and an agent would.
package e2e
