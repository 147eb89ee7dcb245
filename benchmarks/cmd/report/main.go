// Command report turns the output of the benchmarks (several -count runs)
// into the markdown tables the README quotes: medians, and ratios against a
// baseline measured in the same run. It also measures what a timed benchmark
// cannot: which systems keep FIFO order at a limit of one, how many
// goroutines they leave alive after a burst, and the heap a backlog of a
// million tasks takes.
//
//	go run ./cmd/report -raw results/raw.txt > results/report.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskqueue-go/taskqueue/benchmarks"
)

func main() {
	raw := flag.String("raw", "", "benchmark output to summarize")
	checks := flag.Bool("checks", true, "run the behaviour checks")
	readme := flag.String("check-readme", "", "a README whose every backquoted benchmark name must have a line in -raw; checks it and writes no report")
	flag.Parse()
	if *readme != "" {
		n, err := checkReadme(*readme, *raw)
		if err != nil {
			fatal(err)
		}
		fmt.Printf("%d benchmark names in %s, each with results in %s\n", n, *readme, *raw)
		return
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "Measured %s with %s on %s, GOMAXPROCS=%d (%s).\n\n",
		time.Now().Format("2006-01-02"), runtime.Version(), cpuModel(), runtime.GOMAXPROCS(0), runtime.GOARCH)
	if *raw != "" {
		f, err := os.Open(*raw)
		if err != nil {
			fatal(err)
		}
		res := parse(f)
		f.Close()
		fmt.Fprintf(w, "Medians of %d runs of each benchmark; ×base is the ratio to the baseline of the same table and run.\n\n", res.runs)
		queueTables(w, res)
		floorTables(w, res)
		trickleTable(w, res)
		submitWaitTable(w, res)
		simpleTable(w, res, "Serial lanes by key: 10 tasks per key on a target of GOMAXPROCS slots, time per task", "BenchmarkLanes", "", "concurrent", []string{"sec/op", "cpu-ns/op", "allocs/op", "B/op"})
		simpleTable(w, res, "Groups: 10,000 tiny tasks added and waited for, on GOMAXPROCS slots, time per group. What differs: taskqueue batches members onto a few runner tasks and its Go never blocks; errgroup with SetLimit starts a goroutine per member and blocks the submitter at the limit", "BenchmarkGroup", "", "handles", []string{"sec/op", "cpu-ns/op", "allocs/op", "B/op"})
		simpleTable(w, res, "Apply: 1,000,000 atomic adds in parallel, time per loop", "BenchmarkApply", "", "split", []string{"sec/op", "cpu-ns/op", "allocs/op", "B/op"})
		simpleTable(w, res, "Map: 100,000 squares in parallel, results in order, time per map. What differs: taskqueue claims chunks of items, the caller helping; conc's iter.Map claims one element per atomic operation", "BenchmarkMap", "", "conc", []string{"sec/op", "cpu-ns/op", "allocs/op", "B/op"})
		simpleTable(w, res, "Main thread: a synchronous call's round trip; the baseline is a locked goroutine that spins as mainthread.Run does (lockedgoroutine parks; lockedgoroutine-mainthread parks on the main thread)", "BenchmarkMainThreadCall", "", "lockedgoroutine-spin", []string{"sec/op", "cpu-ns/op", "allocs/op"})
		simpleTable(w, res, "Main thread: a post without waiting, one goroutine, waiting for the main thread every 1,000 posts; the baseline is a buffered channel served by a locked goroutine", "BenchmarkMainThreadPost", "", "channel", []string{"sec/op", "cpu-ns/op", "allocs/op"})
		simpleTable(w, res, "Loom: an action posted and run by a frame of 1,000, per action; mutexslice (a slice under a mutex, swapped out by the frame) and channel (a buffered channel the frame empties) do the same by hand", "BenchmarkPost", "", "mutexslice", []string{"sec/op", "allocs/op"})
		simpleTable(w, res, "Off the frame and back: a coroutine hands a tiny function to a worker and resumes once it ran, per round trip; goroutine does the same with a goroutine and a channel polled each frame", "BenchmarkOffFrame", "", "goroutine", []string{"sec/op", "allocs/op", "B/op"})
		loomTable(w, res)
		simpleTable(w, res, "Coroutines: one step of 10,000 coroutines that yield every frame", "BenchmarkCoroutineStep", "", "iterpull", []string{"ns/step", "allocs/op"})
		simpleTable(w, res, "Coroutines: a frame of 100,000 coroutines parked on timed waits, about 1,000 due; the floor is bare iter.Pull coroutines in exact per-frame buckets, the same ones resumed in due order", "BenchmarkCoroutineTimedWaits", "", "floor", []string{"ns/resume", "allocs/op"})
	}
	if *checks {
		fifoTable(w)
		goroutineTable(w)
		backlogTable(w)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "report:", err)
	os.Exit(1)
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "an unknown CPU"
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "an unknown CPU"
}

// results holds the samples of each benchmark (by name, without the -N
// suffix) and unit.
type results struct {
	samples map[string]map[string][]float64
	runs    int
}

func parse(r io.Reader) results {
	res := results{samples: map[string]map[string][]float64{}}
	counts := map[string]int{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := fields[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		if res.samples[name] == nil {
			res.samples[name] = map[string][]float64{}
		}
		counts[name]++
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			unit := fields[i+1]
			if unit == "ns/op" {
				unit, v = "sec/op", v/1e9
			}
			res.samples[name][unit] = append(res.samples[name][unit], v)
		}
	}
	for _, n := range counts {
		res.runs = max(res.runs, n)
	}
	return res
}

// median returns the median of the samples of name in unit, and whether
// there are any.
func (r results) median(name, unit string) (float64, bool) {
	s := slices.Clone(r.samples[name][unit])
	if len(s) == 0 {
		return 0, false
	}
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// spread returns how far the samples of name in unit stray from their
// median, at most, as a fraction of it.
func (r results) spread(name, unit string) float64 {
	m, ok := r.median(name, unit)
	if !ok || m == 0 {
		return 0
	}
	var far float64
	for _, v := range r.samples[name][unit] {
		far = max(far, abs(v-m))
	}
	return far / m
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// cell shows the median of name's time with its spread and its ratio to
// the base benchmark's median.
func (r results) cell(name, base string) string {
	v, ok := r.median(name, "sec/op")
	if !ok {
		return "–"
	}
	b, _ := r.median(base, "sec/op")
	return fmt.Sprintf("%s ±%.0f%% %s", format(v, "sec/op"), 100*r.spread(name, "sec/op"), ratio(v, b))
}

// format shows a value of a unit the way a reader reads it.
func format(v float64, unit string) string {
	switch unit {
	case "sec/op":
		return duration(v * 1e9)
	case "cpu-ns/op", "ns/step", "ns/resume":
		return duration(v)
	case "allocs/op":
		return strconv.FormatFloat(v, 'f', -1, 64)
	case "B/op":
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func duration(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f ns", ns)
}

func ratio(v, base float64) string {
	if base == 0 {
		return "–"
	}
	return fmt.Sprintf("×%.2f", v/base)
}

var impls = func() []string {
	var names []string
	for _, s := range benchmarks.Systems {
		names = append(names, s.Name)
	}
	return names
}()

// queueTables prints, for each task and mode, the time per task of each
// system in each configuration, with its spread and its ratio to the channel
// baseline, then how taskqueue's Go compares with pond's, then the
// allocations and CPU time of one configuration.
func queueTables(w io.Writer, r results) {
	procs := runtime.GOMAXPROCS(0)
	var configs []string
	for _, limit := range []int{1, procs} {
		for _, subs := range []int{1, 8, 64} {
			configs = append(configs, fmt.Sprintf("limit=%d/subs=%d", limit, subs))
		}
	}
	for _, task := range []string{"tiny", "1us"} {
		for _, mode := range []string{"drain", "backlog"} {
			bench := fmt.Sprintf("BenchmarkQueue/task=%s/mode=%s/", task, mode)
			if _, ok := r.median(bench+configs[0]+"/impl=channel", "sec/op"); !ok {
				continue
			}
			configRows(w, r, fmt.Sprintf("Queues: time per task, task=%s, mode=%s", task, mode), bench, configs, impls)
			fmt.Fprint(w, "| taskqueue ÷ pond-go |")
			for _, c := range configs {
				v, _ := r.median(bench+c+"/impl=taskqueue", "sec/op")
				p, _ := r.median(bench+c+"/impl=pond-go", "sec/op")
				fmt.Fprintf(w, " %s |", ratio(v, p))
			}
			fmt.Fprintln(w)
			fmt.Fprintln(w)
		}
		c := fmt.Sprintf("BenchmarkQueue/task=%s/mode=backlog/limit=%d/subs=1", task, procs)
		fmt.Fprintf(w, "### Queues: cost per task, %s\n\n", c)
		fmt.Fprintln(w, "| system | CPU time | allocs | bytes |\n|---|---|---|---|")
		for _, impl := range impls {
			name := c + "/impl=" + impl
			fmt.Fprintf(w, "| %s |", impl)
			for _, unit := range []string{"cpu-ns/op", "allocs/op", "B/op"} {
				if v, ok := r.median(name, unit); ok {
					fmt.Fprintf(w, " %s |", format(v, unit))
				} else {
					fmt.Fprint(w, " – |")
				}
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
}

// configRows prints the header and the rows of a table of bench's systems
// (impl=) by configuration, each cell a time with its spread and its ratio
// to the channel baseline of the same configuration.
func configRows(w io.Writer, r results, title, bench string, configs, systems []string) {
	fmt.Fprintf(w, "### %s (%s...)\n\n", title, bench)
	fmt.Fprintf(w, "| system | %s |\n|---|%s\n", strings.Join(configs, " | "), strings.Repeat("---|", len(configs)))
	for _, impl := range systems {
		fmt.Fprintf(w, "| %s |", impl)
		for _, c := range configs {
			fmt.Fprintf(w, " %s |", r.cell(bench+c+"/impl="+impl, bench+c+"/impl=channel"))
		}
		fmt.Fprintln(w)
	}
}

// floorTables prints BenchmarkQueueFloor: taskqueue beside the cheapest
// designs with its two costly promises (a submission never blocks, an idle
// pool holds no goroutine), against the channel baseline.
func floorTables(w io.Writer, r results) {
	procs := runtime.GOMAXPROCS(0)
	var configs []string
	for _, limit := range []int{1, procs} {
		for _, subs := range []int{1, 8, 64} {
			configs = append(configs, fmt.Sprintf("limit=%d/subs=%d", limit, subs))
		}
	}
	for _, mode := range []string{"drain", "backlog"} {
		bench := fmt.Sprintf("BenchmarkQueueFloor/mode=%s/", mode)
		if _, ok := r.median(bench+configs[0]+"/impl=channel", "sec/op"); !ok {
			continue
		}
		configRows(w, r, fmt.Sprintf("Queues against their floors: tiny tasks, mode=%s; floor-mutex is a ring under a mutex with workers on demand, floor-tickets the same with a lock-free intake (one atomic add per submission)", mode),
			bench, configs, []string{"channel", "taskqueue", "floor-mutex", "floor-tickets"})
		fmt.Fprintln(w)
	}
}

// trickleTable prints the time of a hand-off after an idle moment.
func trickleTable(w io.Writer, r results) {
	procs := runtime.GOMAXPROCS(0)
	fmt.Fprintf(w, "### Trickle: one task, wait until it ran, again (BenchmarkTrickle)\n\n| system | limit=1 | limit=%d |\n|---|---|---|\n", procs)
	for _, impl := range impls {
		fmt.Fprintf(w, "| %s |", impl)
		for _, limit := range []int{1, procs} {
			b := fmt.Sprintf("BenchmarkTrickle/limit=%d/impl=", limit)
			fmt.Fprintf(w, " %s |", r.cell(b+impl, b+"channel"))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func submitWaitTable(w io.Writer, r results) {
	simpleTable(w, r, "Submit and wait through a worker, one task at a time", "BenchmarkSubmitWait", "path=handoff/", "channel", []string{"sec/op", "cpu-ns/op", "allocs/op", "B/op"})
	simpleTable(w, r, "Submit and wait on an idle queue: RunSync runs on the caller, against a call under a mutex", "BenchmarkSubmitWait", "path=inline/", "mutex", []string{"sec/op", "allocs/op", "B/op"})
}

// simpleTable prints one row per impl= sub-benchmark of bench (with the
// given prefix of keys), its units' medians, and the first unit's ratio to
// the base impl.
func simpleTable(w io.Writer, r results, title, bench, prefix, base string, units []string) {
	var rows []string
	for name := range r.samples {
		if rest, ok := strings.CutPrefix(name, bench+"/"+prefix); ok && strings.HasPrefix(rest, "impl=") {
			rows = append(rows, strings.TrimPrefix(rest, "impl="))
		}
	}
	if len(rows) == 0 {
		return
	}
	slices.SortFunc(rows, func(a, b string) int { return indexOf(a) - indexOf(b) })
	baseV, _ := r.median(bench+"/"+prefix+"impl="+base, units[0])
	fmt.Fprintf(w, "### %s (%s)\n\n| impl | %s | ×%s |", title, bench+"/"+prefix, unitName(units[0]), base)
	for _, u := range units[1:] {
		fmt.Fprintf(w, " %s |", unitName(u))
	}
	fmt.Fprintf(w, "\n|---|---|---|%s\n", strings.Repeat("---|", len(units)-1))
	for _, impl := range rows {
		name := bench + "/" + prefix + "impl=" + impl
		v, _ := r.median(name, units[0])
		fmt.Fprintf(w, "| %s | %s ±%.0f%% | %s |", impl, format(v, units[0]), 100*r.spread(name, units[0]), ratio(v, baseV))
		for _, u := range units[1:] {
			if x, ok := r.median(name, u); ok {
				fmt.Fprintf(w, " %s |", format(x, u))
			} else {
				fmt.Fprint(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func indexOf(impl string) int {
	if i := slices.Index(impls, impl); i >= 0 {
		return i
	}
	return len(impls) + int(impl[0])
}

func unitName(u string) string {
	switch u {
	case "sec/op":
		return "time"
	case "cpu-ns/op":
		return "CPU time"
	case "allocs/op":
		return "allocs"
	case "B/op":
		return "bytes"
	case "ns/step":
		return "time per step"
	case "ns/resume":
		return "time per resume"
	}
	return u
}

func loomTable(w io.Writer, r results) {
	for _, pending := range []int{10_000, 100_000} {
		simpleTable(w, r, fmt.Sprintf("Loom: a frame with %d pending delayed actions, about %d due", pending, pending/300),
			"BenchmarkLoomFrame", fmt.Sprintf("pending=%d/", pending), "listscan", []string{"sec/op", "allocs/op"})
	}
}

// fifoTable checks, for each system at a limit of one, whether tasks start
// in the order they were submitted, from one submitter and from four.
func fifoTable(w io.Writer) {
	fmt.Fprintln(w, "### Order at a limit of one (10,000 tasks)\n\n| system | one submitter | four submitters, per submitter |\n|---|---|---|")
	for _, sys := range benchmarks.Systems {
		fmt.Fprintf(w, "| %s | %s | %s |\n", sys.Name, yesNo(keepsOrder(sys, 1)), yesNo(keepsOrder(sys, 4)))
	}
	fmt.Fprintln(w)
}

func yesNo(b bool) string {
	if b {
		return "FIFO"
	}
	return "out of order"
}

// keepsOrder submits 10,000 tasks from subs goroutines to a pool of limit
// one, and reports whether each submitter's tasks ran in the order it
// submitted them.
func keepsOrder(sys benchmarks.System, subs int) bool {
	const n = 10_000
	var mu sync.Mutex
	last := make([]int, subs) // the last task of each submitter that ran
	inOrder := true
	p := sys.New(1, func() {})
	var wg sync.WaitGroup
	for s := range subs {
		wg.Go(func() {
			for i := 1; i <= n/subs; i++ {
				p.Submit(func() {
					mu.Lock()
					defer mu.Unlock()
					if i < last[s] {
						inOrder = false
					}
					last[s] = i
				})
			}
		})
	}
	wg.Wait()
	p.Close()
	return inOrder
}

// goroutineTable counts the goroutines each system leaves alive 100 ms after
// a burst of 10,000 tasks has run.
func goroutineTable(w io.Writer) {
	fmt.Fprintf(w, "### Goroutines alive 100 ms after a burst of 10,000 tasks (limit %d)\n\n| system | goroutines |\n|---|---|\n", runtime.GOMAXPROCS(0))
	for _, sys := range benchmarks.Systems {
		var done atomic.Int64
		before := runtime.NumGoroutine()
		p := sys.New(runtime.GOMAXPROCS(0), func() { done.Add(1) })
		for range 10_000 {
			p.Go()
		}
		for done.Load() < 10_000 {
			runtime.Gosched()
		}
		time.Sleep(100 * time.Millisecond)
		fmt.Fprintf(w, "| %s | %d |\n", sys.Name, runtime.NumGoroutine()-before)
		p.Close()
	}
	fmt.Fprintln(w)
}

// backlogTable measures the memory that a backlog of a million queued tasks
// takes in each system that queues without blocking its submitters: what it
// allocated to queue them, and what stays live once a collection has run.
func backlogTable(w io.Writer) {
	const n = 1_000_000
	fmt.Fprintln(w, "### Memory of a backlog of 1,000,000 tiny tasks (per task)\n\n| system | live | allocated |\n|---|---|---|")
	for _, sys := range benchmarks.Systems {
		if !sys.Queues || sys.Name == "channel" {
			fmt.Fprintf(w, "| %s | – (blocks its submitters instead) | – |\n", sys.Name)
			continue
		}
		gate := make(chan struct{})
		var started, done atomic.Int64
		limit := runtime.GOMAXPROCS(0)
		p := sys.New(limit, func() {
			if started.Add(1) <= int64(limit) {
				<-gate // the first tasks hold every worker
			}
			done.Add(1)
		})
		for range limit {
			p.Go()
		}
		for started.Load() < int64(limit) {
			runtime.Gosched()
		}
		runtime.GC()
		var before, queued, live runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			p.Go()
		}
		runtime.ReadMemStats(&queued)
		runtime.GC()
		runtime.ReadMemStats(&live)
		fmt.Fprintf(w, "| %s | %.1f B | %.1f B |\n", sys.Name,
			(float64(live.HeapAlloc)-float64(before.HeapAlloc))/n,
			float64(queued.TotalAlloc-before.TotalAlloc)/n)
		close(gate)
		for done.Load() < n+int64(limit) {
			runtime.Gosched()
		}
		p.Close()
		runtime.GC()
	}
	fmt.Fprintln(w)
}
