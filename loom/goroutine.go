package loom

// A loom must know whether its caller is its owner, or a coroutine body the
// owner is running (iter.Pull runs each body on a goroutine of its own,
// switched to synchronously), and Go offers no goroutine identity. So the
// loom records the runtime's g pointer of its owner and of each coroutine
// body. The pointer is stable for the life of a goroutine.
//
// curg returns that identity for the calling goroutine: read from the g
// register or thread-local slot on amd64 and arm64 (goroutine_*.s), parsed
// from the goroutine's stack header elsewhere (goroutine_other.go), slower
// but equally correct. Package scheduler keeps the same few lines for its
// slot holders; a package internal to both would have to sit at the top of
// the module, whose layout is fixed.
