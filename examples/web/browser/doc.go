// Package browser holds the web example's test in a real browser: it
// serves the page, loads it in headless Chromium with chromedp, and checks
// the canvas against the desktop renderer and that the tiles came in over
// many frames.
// It is a module of its own so that chromedp stays out of the library's
// dependencies.
//
//	cd examples/web/browser && go test
//	go test -run TestPage -screenshot ../screenshot.png   # refresh the README's picture
package browser
