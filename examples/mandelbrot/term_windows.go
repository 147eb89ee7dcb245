package main

import (
	"os"
	"syscall"
)

// isTerminal reports whether f is a console, where the progress bar is
// redrawn in place. NUL and pipes are not.
func isTerminal(f *os.File) bool {
	var mode uint32
	return syscall.GetConsoleMode(syscall.Handle(f.Fd()), &mode) == nil
}
