package benchmarks

import (
	"sync"
	"sync/atomic"
	"time"
)

// SpinIters is how many rounds of Spin take about a microsecond on this
// machine, measured once.
var SpinIters = sync.OnceValue(func() int {
	const rounds = 1 << 22
	start := time.Now()
	Spin(rounds)
	return int(rounds * int64(time.Microsecond) / int64(time.Since(start)))
})

var sink atomic.Uint64

// Spin does n rounds of arithmetic that the compiler cannot remove.
func Spin(n int) {
	x := uint64(n)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink.Add(x)
}
