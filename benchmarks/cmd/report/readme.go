package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// benchName matches a benchmark named in backquotes in the README, with its
// sub-benchmark path if it gives one: `BenchmarkQueue/task=tiny`.
var benchName = regexp.MustCompile("`(Benchmark[A-Za-z0-9_]+(?:/[^`\\s]*)?)`")

// checkReadme reports every benchmark the README names that has no line in
// the results file raw, so that no figure stands without a measurement
// behind it. It returns the number of names checked.
func checkReadme(readme, raw string) (int, error) {
	text, err := os.ReadFile(readme)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(raw)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "Benchmark") {
			lines = append(lines, strings.Fields(line)[0])
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	var missing []string
	names := benchName.FindAllStringSubmatch(string(text), -1)
	for _, m := range names {
		if !measured(lines, m[1]) {
			missing = append(missing, m[1])
		}
	}
	if len(missing) > 0 {
		return len(names), fmt.Errorf("%s names benchmarks with no line in %s: %s", readme, raw, strings.Join(missing, ", "))
	}
	return len(names), nil
}

// measured reports whether one of the result lines is the benchmark name or
// one of its sub-benchmarks, with or without the -GOMAXPROCS suffix.
func measured(lines []string, name string) bool {
	for _, l := range lines {
		if l == name || strings.HasPrefix(l, name+"/") || strings.HasPrefix(l, name+"-") {
			return true
		}
	}
	return false
}
