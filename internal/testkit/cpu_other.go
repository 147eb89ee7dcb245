//go:build !unix

package testkit

import (
	"testing"
	"time"
)

// ReportCPU reports nothing where the CPU time is not read.
func ReportCPU(*testing.B) func() { return func() {} }

// CPUTime returns 0 where the CPU time is not read.
func CPUTime() time.Duration { return 0 }
