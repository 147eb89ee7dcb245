//go:build unix

package main

import "os"

// isTerminal reports whether f is a terminal, where the progress bar is
// redrawn in place: a character device other than the null device, which is
// one too.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && !os.SameFile(info, null)
}
