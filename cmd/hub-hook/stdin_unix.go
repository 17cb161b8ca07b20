//go:build unix

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// giveBack makes read, what this process read of its standard input, the
// standard input of the hub run in its place (execHub), from the start:
// a file of its own, removed as soon as it is made.
func giveBack(read []byte) error {
	f, err := os.CreateTemp("", "hub-hook-input-")
	if err != nil {
		return fmt.Errorf("keep the host's input for the hub: %w", err)
	}
	defer f.Close()
	os.Remove(f.Name())
	if _, err := f.Write(read); err != nil {
		return fmt.Errorf("keep the host's input for the hub: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return fmt.Errorf("keep the host's input for the hub: %w", err)
	}
	if err := unix.Dup2(int(f.Fd()), 0); err != nil {
		return fmt.Errorf("hand the host's input to the hub: %w", err)
	}
	return nil
}
