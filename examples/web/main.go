// Command web serves a page that runs this module in the browser: the
// program in ./wasm, compiled for js/wasm when the server starts, renders
// the Mandelbrot set with the desktop demo's tiles and colours on a
// concurrent queue, and a loom driven by the page's animation frames draws
// each tile into a canvas as it arrives.
//
//	go run ./examples/web                  # then open the address it prints
//	go run ./examples/web -addr :9000
//
// The first run compiles the standard library for js/wasm as well as the
// page's program, 10 to 40 s on two cores; it prints how far the build has
// got every few seconds. Later runs build in a second or two.
//
// The page's query changes the picture (?w=640&h=480&tile=32&iter=300&workers=2);
// yield=0 shows what a worker that never pauses does to the frames.
// examples/web/browser tests the page in headless Chromium.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/taskqueue-go/taskqueue/examples/web/internal/site"
)

func main() {
	addr := flag.String("addr", "localhost:8080", "the address to serve the page on")
	flag.Parse()
	if err := serve(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(1)
	}
}

// serve builds the page, saying what it does while the compiler runs (a
// first build takes 10 to 40 s), serves it on addr until an interrupt, and
// removes the built files.
func serve(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := site.Build(ctx, os.Stdout)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Printf("built main.wasm (%.1f MB) in %v\n", float64(s.WasmSize)/1e6, s.BuildTime.Round(time.Millisecond))

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("serving http://%s/ (interrupt to stop)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
