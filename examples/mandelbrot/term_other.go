//go:build !unix && !windows

package main

import "os"

// isTerminal reports false: on this system the progress is printed a line
// per 10% step.
func isTerminal(*os.File) bool { return false }
