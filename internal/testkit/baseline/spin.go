package baseline

import (
	"sync"
	"sync/atomic"
	"time"
)

var sink atomic.Uint64

// Spin does n rounds of arithmetic that the compiler cannot remove: work of
// a known cost (see SpinRounds) for a benchmark's task or call.
func Spin(n int) {
	x := uint64(n)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink.Add(x)
}

// roundsPerSecond is how many rounds of Spin run in a second on this
// machine, measured once, on the first call.
var roundsPerSecond = sync.OnceValue(func() float64 {
	const rounds = 1 << 22
	start := time.Now()
	Spin(rounds)
	return rounds / max(time.Since(start), time.Nanosecond).Seconds()
})

// SpinRounds returns how many rounds of Spin take about d on this machine,
// at least one. The first call measures Spin's speed, which takes a few
// milliseconds; later calls return at once.
func SpinRounds(d time.Duration) int {
	return max(1, int(roundsPerSecond()*d.Seconds()))
}
