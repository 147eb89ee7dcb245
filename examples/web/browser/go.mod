module github.com/taskqueue-go/taskqueue/examples/web/browser

go 1.25.0

replace github.com/taskqueue-go/taskqueue => ../../..

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/taskqueue-go/taskqueue v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	golang.org/x/sync v0.22.0 // indirect
)
