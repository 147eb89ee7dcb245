// Package leaktest holds what the module's tests give goleak, so that every
// package checks for leaked goroutines the same way on every platform. Only
// tests import it.
package leaktest

import (
	"runtime"

	"go.uber.org/goleak"
)

// Options returns opts, and on js/wasm the goroutine the runtime keeps for
// the host's events (runtime.handleEvent), which is not a leak.
func Options(opts ...goleak.Option) []goleak.Option {
	if runtime.GOOS == "js" {
		opts = append(opts, goleak.IgnoreAnyFunction("runtime.handleEvent"))
	}
	return opts
}
