//go:build !linux && !darwin && !windows && !js

package mainthread

// threadID cannot tell the OS threads apart on this system without unsafe
// code: IsMain reports false everywhere (see IsMain).
func threadID() uint64 { return 0 }

// knownThreads is true where threadID tells threads apart.
const knownThreads = false
