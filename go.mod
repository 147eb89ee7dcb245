module github.com/taskqueue-go/taskqueue

go 1.25.0

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.22.0
)

require pgregory.net/rapid v1.3.0 // indirect
