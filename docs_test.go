package taskqueue_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testRef matches a test named in docs/promises.md: `package.Name`, where
// package is a directory of the module (scheduler, internal/handoff) and
// Name a test, example, fuzz target or benchmark.
var testRef = regexp.MustCompile("`((?:[a-z]+/)*[a-z]+)\\.((?:Test|Example|Fuzz|Benchmark)[A-Za-z0-9_]*)`")

// TestPromisesIndex fails if docs/promises.md names a test that does not
// exist, so that the index of the promises cannot point at tests that were
// renamed or removed, and if a promise row names no test and does not say
// none.
func TestPromisesIndex(t *testing.T) {
	f, err := os.Open(filepath.Join("docs", "promises.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defined := map[string]map[string]bool{} // package dir → test functions
	rows, refs := 0, 0
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if !strings.HasPrefix(text, "| ") || strings.HasPrefix(text, "| promise") {
			continue
		}
		rows++
		found := testRef.FindAllStringSubmatch(text, -1)
		if len(found) == 0 && !strings.Contains(text, "**none**") {
			t.Errorf("docs/promises.md:%d: a promise names no test and does not say **none**", line)
		}
		for _, m := range found {
			refs++
			dir, name := m[1], m[2]
			if defined[dir] == nil {
				defined[dir] = testFuncs(t, dir)
			}
			if !defined[dir][name] {
				t.Errorf("docs/promises.md:%d: %s.%s does not exist", line, dir, name)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d promises, %d tests named", rows, refs)
}

// testFuncs returns the top-level functions of the _test.go files in dir.
func testFuncs(t *testing.T, dir string) map[string]bool {
	files, err := filepath.Glob(filepath.Join(filepath.FromSlash(dir), "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^func ([A-Za-z0-9_]+)\(`)
	funcs := map[string]bool{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			funcs[string(m[1])] = true
		}
	}
	return funcs
}
