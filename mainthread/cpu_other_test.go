//go:build !unix

package mainthread_test

import "testing"

// reportCPU reports nothing where the CPU time is not read.
func reportCPU(*testing.B) func() { return func() {} }
