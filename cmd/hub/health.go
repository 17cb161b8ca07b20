package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// runHealth is `hub health`: it asks a running hub's /readyz whether the
// hub is ready, for a container's HEALTHCHECK or a supervisor, which have
// no curl. It returns nil (exit 0) when the hub answers ready, an error
// saying why (exit 1) otherwise.
func runHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hub health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hub health [--addr HOST:PORT] [--tls] [--tls-ca FILE] [--timeout 5s]

Asks the hub at --addr (its --http-addr) whether it is ready (GET /readyz:
the store reachable and migrated, the disk not full). Exit code 0: ready;
1: not ready, or not reached (the reason is printed). A wildcard address
(0.0.0.0:7701, :7701) is asked on loopback.

Flags:
`)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:7701", "the hub's HTTP address, as given to its --http-addr")
	useTLS := fs.Bool("tls", false, "the hub serves TLS (it runs with --tls-cert): ask over HTTPS, verified with the system's roots or --tls-ca")
	caFile := fs.String("tls-ca", "", "CA certificate (PEM) that signed the hub's certificate; implies --tls")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: hub health takes flags only (hub health -h)", fs.Args())
	}
	if *timeout <= 0 {
		return fmt.Errorf("--timeout %v: give a positive duration such as 5s", *timeout)
	}
	hostPort, err := dialAddr(*addr)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: *timeout}
	scheme := "http"
	if *useTLS || *caFile != "" {
		scheme = "https"
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if *caFile != "" {
			pem, err := os.ReadFile(*caFile)
			if err != nil {
				return fmt.Errorf("--tls-ca: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return fmt.Errorf("--tls-ca %s: no PEM certificate in it", *caFile)
			}
		}
		client.Transport = &http.Transport{TLSClientConfig: cfg}
	}
	target := scheme + "://" + hostPort + "/readyz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", *addr, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the method and URL, said once below
		}
		return fmt.Errorf("%s: %w (is the hub running with --http-addr %s? give its HTTP address with --addr, and --tls if it serves TLS)", target, err, *addr)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var reply struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	_ = json.Unmarshal(body, &reply) // a body that is not the hub's leaves both empty
	if resp.StatusCode == http.StatusOK && reply.Status == "ready" {
		fmt.Fprintln(stdout, "ready")
		return nil
	}
	if reply.Status != "" {
		return fmt.Errorf("%s: %s: %s", target, reply.Status, reply.Error)
	}
	return fmt.Errorf("%s answered %s, not the hub's readiness (is --addr the hub's HTTP address? add --tls if it serves TLS): %.200s", target, resp.Status, strings.TrimSpace(string(body)))
}

// dialAddr turns a listen address into one to dial: a wildcard or empty
// host is this machine, asked on loopback.
func dialAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fmt.Errorf("--addr %q: give HOST:PORT, such as 127.0.0.1:7701", addr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port), nil
}
