module github.com/taskqueue-go/taskqueue

go 1.25.0

require (
	github.com/anishathalye/porcupine v1.3.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.22.0
	pgregory.net/rapid v1.3.0
)
