//go:build unix

package testkit

import (
	"syscall"
	"testing"
	"time"
)

// ReportCPU starts measuring the process's CPU time and returns a function
// that reports it per operation as the metric cpu-ns/op: what a benchmark
// costs the machine, polling and spinning included, beside ns/op's wall
// time. Where CPUTime reads nothing, the metric is 0.
func ReportCPU(b *testing.B) func() {
	start := CPUTime()
	return func() {
		b.ReportMetric(float64(CPUTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

// CPUTime returns the CPU time the process has used, user and system.
func CPUTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
