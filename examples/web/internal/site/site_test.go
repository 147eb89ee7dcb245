package site

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestHandler serves a site whose files are stand-ins (Build, which
// compiles the page, is exercised by the browser test): the page at /, the
// two files with their types, nothing else.
func TestHandler(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"main.wasm": "\x00asm", "wasm_exec.js": "// loader"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer((&Site{dir: dir}).Handler())
	defer srv.Close()

	for _, c := range []struct {
		path, status, ctype, body string
	}{
		{"/", "200 OK", "text/html", `<canvas id="picture"`},
		{"/main.wasm", "200 OK", "application/wasm", "\x00asm"},
		{"/wasm_exec.js", "200 OK", "javascript", "// loader"},
		{"/index.html", "404 Not Found", "", ""},
		{"/site.go", "404 Not Found", "", ""},
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != c.status {
			t.Errorf("GET %s: %s; want %s", c.path, resp.Status, c.status)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, c.ctype) {
			t.Errorf("GET %s: Content-Type %q; want %s", c.path, ct, c.ctype)
		}
		if !strings.Contains(string(body), c.body) {
			t.Errorf("GET %s: body lacks %q", c.path, c.body)
		}
	}
}

// TestLineCounter: the build's progress counts the complete lines the go
// command wrote, whatever the pieces they came in, and keeps every byte for
// the error of a failed build.
func TestLineCounter(t *testing.T) {
	var c lineCounter
	for _, piece := range []string{"runtime\ninternal/", "bytealg\n", "", "sync\nfmt"} {
		if n, err := c.Write([]byte(piece)); n != len(piece) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", piece, n, err)
		}
	}
	if n := c.Lines(); n != 3 {
		t.Errorf("Lines() = %d; want 3", n)
	}
	if got, want := string(c.Bytes()), "runtime\ninternal/bytealg\nsync\nfmt"; got != want {
		t.Errorf("Bytes() = %q; want %q", got, want)
	}
}
