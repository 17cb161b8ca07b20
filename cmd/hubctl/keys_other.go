//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package main

import (
	"context"
	"os"
)

// watchKeys does nothing where the terminal cannot be put in key mode:
// `hubctl watch` then quits on Ctrl-C only.
func watchKeys(context.Context, *os.File, func()) (stop func()) { return func() {} }
