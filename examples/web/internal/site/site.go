// Package site builds the web example's page and serves it: index.html,
// the program compiled for js/wasm, and the Go distribution's wasm_exec.js
// that loads it.
package site

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Program is the import path of the page's program, built for js/wasm.
const Program = "github.com/taskqueue-go/taskqueue/examples/web/wasm"

//go:embed index.html
var index []byte

// A Site is the page's files, built and ready to serve.
type Site struct {
	dir       string        // holds main.wasm and wasm_exec.js
	BuildTime time.Duration // how long the wasm build took
	WasmSize  int64         // of main.wasm, in bytes
}

// Build compiles the page's program for js/wasm with the go command found
// in PATH, into a temporary directory that Close removes, and copies
// wasm_exec.js from that Go's distribution (lib/wasm). It must run inside a
// module that reaches the program's package: this repository, or a module
// that requires it. If log is not nil, Build says there what it is doing,
// and while the compiler runs, every few seconds, how long it has run and
// how many packages it has compiled: a first build compiles the standard
// library for js/wasm too, which takes 10 to 40 s on two cores. Build returns
// the go command's output in its error when the build fails.
func Build(ctx context.Context, log io.Writer) (*Site, error) {
	if log == nil {
		log = io.Discard
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("site: the page is built with the go command: %w", err)
	}
	goroot, err := output(ctx, gocmd, "", nil, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	wasmEnv := []string{"GOOS=js", "GOARCH=wasm"}
	// The package's directory, whichever module the command runs in; the
	// build runs there, with the go.mod of the package's own module.
	pkgDir, err := output(ctx, gocmd, "", wasmEnv, "list", "-find", "-f", "{{.Dir}}", Program)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "taskqueue-web-")
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	s := &Site{dir: dir}
	fmt.Fprintf(log, "building the page: GOOS=js GOARCH=wasm go build %s\n", Program)
	fmt.Fprintln(log, "(a first build also compiles the standard library for js/wasm, 10 to 40 s on two cores; later ones take a second or two)")
	start := time.Now()
	if err := build(ctx, gocmd, pkgDir, wasmEnv, filepath.Join(dir, "main.wasm"), log); err != nil {
		s.Close()
		return nil, err
	}
	s.BuildTime = time.Since(start)
	if fi, err := os.Stat(filepath.Join(dir, "main.wasm")); err == nil {
		s.WasmSize = fi.Size()
	}
	if err := copyFile(filepath.Join(dir, "wasm_exec.js"), filepath.Join(goroot, "lib", "wasm", "wasm_exec.js")); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// heartbeat is how often build says how far the compiler has got.
const heartbeat = 5 * time.Second

// build runs go build -v for the package in pkgDir, with env, into out.
// The go command names each package on standard error as it compiles it;
// every heartbeat, build writes to log how long it has run and how many
// packages it has compiled.
func build(ctx context.Context, gocmd, pkgDir string, env []string, out string, log io.Writer) error {
	cmd := exec.CommandContext(ctx, gocmd, "build", "-v", "-o", out, ".")
	cmd.Dir = pkgDir
	cmd.Env = append(os.Environ(), env...)
	var stderr lineCounter
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("site: go build: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("site: %s go build %s: %w\n%s", strings.Join(env, " "), Program, err, stderr.Bytes())
			}
			return nil
		case <-tick.C:
			fmt.Fprintf(log, "  still building: %v, %d packages compiled\n", time.Since(start).Round(time.Second), stderr.Lines())
		}
	}
}

// lineCounter keeps what is written to it and counts its complete lines.
// It is written by the go command's copying goroutine and read by build.
type lineCounter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines int
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines += bytes.Count(p, []byte("\n"))
	return c.buf.Write(p)
}

// Lines returns how many complete lines were written.
func (c *lineCounter) Lines() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines
}

// Bytes returns a copy of what was written.
func (c *lineCounter) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// Handler serves the page: index.html at /, main.wasm and wasm_exec.js.
func (s *Site) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(index)
	})
	for _, name := range []string{"main.wasm", "wasm_exec.js"} {
		mux.HandleFunc("GET /"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "no-store")
			http.ServeFile(w, r, filepath.Join(s.dir, name))
		})
	}
	return mux
}

// Close removes the built files.
func (s *Site) Close() error { return os.RemoveAll(s.dir) }

// output runs the go command in dir (the current one if empty), with env
// added to the process's, and returns its standard output, trimmed.
func output(ctx context.Context, gocmd, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, gocmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("site: %s go %s: %w\n%s", strings.Join(env, " "), strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("site: the Go distribution's wasm_exec.js: %w", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
