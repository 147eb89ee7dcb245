module github.com/taskqueue-go/taskqueue/examples/glfw

go 1.26.0

require (
	github.com/go-gl/glfw/v3.3/glfw v0.0.0-20260823155953-d41da22a9587
	github.com/taskqueue-go/taskqueue v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
	golang.org/x/image v0.47.0
)

require golang.org/x/sync v0.22.0 // indirect

replace github.com/taskqueue-go/taskqueue => ../..
