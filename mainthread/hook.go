package mainthread

import "github.com/taskqueue-go/taskqueue/internal/mainhook"

// This init gives package taskqueue its main-thread helpers without it
// importing this package, whose init locks the main goroutine: see package
// internal/mainhook.
func init() {
	mainhook.Call, mainhook.Go, mainhook.ErrClosed = runSync, runAsync, errClosed
}
