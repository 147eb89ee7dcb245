//go:build unix

package benchmarks

import (
	"syscall"
	"testing"
	"time"
)

// ReportCPU starts measuring the process's CPU time and returns a function
// that reports it per operation as cpu-ns/op.
func ReportCPU(b *testing.B) func() {
	start := CPUTime()
	return func() {
		b.ReportMetric(float64(CPUTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

// CPUTime returns the CPU time the process has used.
func CPUTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
