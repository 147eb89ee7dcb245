//go:build unix

package mainthread_test

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU starts measuring the process's CPU time and returns a function
// that reports it per operation as cpu-ns/op.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
