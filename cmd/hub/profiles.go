package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/agenthub/hub/internal/loopback"
)

// serveProfiles serves Go's profiles of this process (net/http/pprof: CPU,
// heap, allocations, goroutines, the execution trace) on addr until ctx
// ends, and returns the address it listens on. They show what the hub's
// CPU and memory go to, its SQLite calls included (perf loses the Go
// caller of a cgo call), and answer anyone who can connect, with no
// token: addr must be a loopback address, and a request must name a
// loopback host (a web page reaching it through DNS rebinding names its
// own).
func serveProfiles(ctx context.Context, addr string, logger *slog.Logger) (net.Addr, error) {
	if !loopback.Addr(addr) {
		return nil, fmt.Errorf("--pprof-addr %q: give a loopback address such as 127.0.0.1:6060 (the profiles answer anyone who can connect, with no token)", addr)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index) // and the named profiles: heap, allocs, goroutine, …
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			host, _, err := net.SplitHostPort(r.Host)
			if err != nil {
				host = r.Host
			}
			if !loopback.Host(host) {
				http.Error(w, fmt.Sprintf("host %q: the profiles answer on a loopback name only (127.0.0.1, localhost)", host), http.StatusForbidden)
				return
			}
			mux.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("the profiles' server stopped", "err", err)
		}
	}()
	logger.Info("serving Go's profiles", "url", "http://"+lis.Addr().String()+"/debug/pprof/")
	return lis.Addr(), nil
}
