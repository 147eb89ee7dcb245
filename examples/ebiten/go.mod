module github.com/taskqueue-go/taskqueue/examples/ebiten

go 1.25.0

replace github.com/taskqueue-go/taskqueue => ../..

require (
	github.com/hajimehoshi/ebiten/v2 v2.8.8
	github.com/taskqueue-go/taskqueue v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
)

require (
	github.com/ebitengine/gomobile v0.0.0-20240911145611-4856209ac325 // indirect
	github.com/ebitengine/hideconsole v1.0.0 // indirect
	github.com/ebitengine/purego v0.8.0 // indirect
	github.com/jezek/xgb v1.1.1 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.25.0 // indirect
)
