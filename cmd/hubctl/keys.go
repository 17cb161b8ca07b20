//go:build linux || darwin || freebsd || netbsd || openbsd

package main

import (
	"context"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// watchKeys lets `hubctl watch` quit on q: it turns off line buffering and
// echo on the terminal in (Ctrl-C still interrupts), reads keys until ctx
// ends, and calls quit on q or Q. stop restores the terminal and waits for
// the reader. When in is not a terminal it does nothing.
func watchKeys(ctx context.Context, in *os.File, quit func()) (stop func()) {
	fd := int(in.Fd())
	old, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return func() {}
	}
	raw := *old
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 0, 1 // reads return after 0.1 s, so the reader sees ctx end
	if err := unix.IoctlSetTermios(fd, setTermios, &raw); err != nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 16)
		for ctx.Err() == nil {
			n, err := in.Read(buf)
			if err != nil && n == 0 {
				continue
			}
			for _, b := range buf[:n] {
				if b == 'q' || b == 'Q' {
					quit()
					return
				}
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		unix.IoctlSetTermios(fd, setTermios, old)
	}
}
