package benchmarks

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/mainthread"
)

// TestMain serves the main thread, for BenchmarkMainThreadCall.
func TestMain(m *testing.M) {
	mainthread.Run(func() {
		goleak.VerifyTestMain(m,
			goleak.IgnoreCurrent(),
			// ants starts a purging goroutine for its default pool when
			// the package is imported.
			goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
			goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		)
	})
}
