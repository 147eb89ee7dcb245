package testkit

import (
	"bytes"
	"runtime/pprof"
	"strings"
)

// Labels returns the pprof labels of the calling goroutine as the goroutine
// profile prints them, such as {"queue":"render"}, or "{}" for none: the
// runtime offers no other way to read them.
//
//go:noinline
func Labels() string {
	var buf bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&buf, 1)
	for rec := range strings.SplitSeq(buf.String(), "\n\n") {
		if !strings.Contains(rec, "internal/testkit.Labels+") {
			continue
		}
		for line := range strings.SplitSeq(rec, "\n") {
			if l, ok := strings.CutPrefix(line, "# labels: "); ok {
				return l
			}
		}
		return "{}"
	}
	panic("testkit.Labels: the calling goroutine is not in the goroutine profile")
}
