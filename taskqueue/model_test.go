package taskqueue_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

// The model of the whole library. rapid draws a program: a forest of queues
// (serial and concurrent roots, children and grandchildren, bounded ones), a
// Keyed on one of them, and a list of steps for a driver goroutine:
// submissions of every form, continuations (Then) of earlier handles,
// groups, cancellations, Suspend and Resume,
// SetLimit, CloseNow, Shutdown, CancelKey and the passing of time. Tasks run
// small bodies of nested work: runs in their place (from the task, from
// goroutines it waits for, from an iter.Pull body it drives), waits for work
// of later trees (RunSync, Handle.Wait, Group.Wait, Apply), waits for work of
// their own tree, submissions to their own queue, sleeps, and an end that
// returns, fails, panics or calls runtime.Goexit.
//
// Each program runs in a testing/synctest bubble: a hang of the library on
// its channels, conditions, wait groups or sleeps is reported by the runtime
// as a deadlock of the bubble at once, which the model turns into a failure
// that rapid shrinks to the smallest program.
//
// A hang on one of the library's mutexes is no deadlock to the runtime: a
// goroutine waiting for a sync.Mutex or sync.RWMutex is not durably blocked
// (a goroutine outside the bubble could unlock it), so the bubble would
// never end. A watchdog (watchBubble, in model_hang_test.go) reports it
// instead. While a program runs, it takes a snapshot of every goroutine
// every 10ms (runtime.Stack, which stops the world); a program whose
// bubble's goroutines are all blocked, durably or on a mutex, one at least
// on a mutex, in the same waits in two snapshots in a row, can never go on.
// It fails at once, its goroutines abandoned: they leak, and the test has
// failed. rapid shrinks the failure as any other, within -rapid.shrinktime
// (30s by default), each hung try costing two snapshots and leaking its
// goroutines; then the smallest program that hung is logged, with its
// steps, the step its driver was in, and the stacks of its bubble's
// goroutines. A hang that the schedule decides shrinks further with
// -model.repeat.
//
// Waits that the docs allow to last until their context ends (a task of a
// concurrent queue waiting for work of its own tree) are given deadlines.
// During the program and after it, the model checks the library against a
// plain reference:
//
//   - no queue or target runs more functions at once than its limit, and
//     none starts while it, or a target above it, is suspended (Suspend,
//     Resume and lowering SetLimit are done with the bubble at rest, so that
//     no start is in flight);
//   - the tasks that the driver submits to a serial queue start in the order
//     they were submitted;
//   - every function runs at most once, and every handle ends consistently
//     with whether its function ran;
//   - a wait for work of a later tree, which the docs say must end, ends
//     without its deadline; a wait that panics because it would wait for
//     itself does so only when it holds the one slot of a serial queue the
//     awaited work needs;
//   - Group.Wait never returns while a member of its group runs;
//   - CloseNow returns exactly the number of tasks it canceled;
//   - once the program's queues are shut down, every Stats adds up: what ran
//     is Completed, split into Succeeded, Failed and Panicked as the bodies
//     ended, and every other submission is Canceled or Rejected, Keyed.Total
//     likewise; nothing is queued, delayed or running, and no lane is left.

var (
	modelPrograms = flag.Int("model.programs", 0, "programs TestModel runs (0: 200, or 50 with -short)")
	modelRepeat   = flag.Int("model.repeat", 1, "runs of each program, for shrinking a failure that depends on the schedule")
	modelTrace    = flag.Bool("model.trace", false, "print each program's steps, the queues' Stats after each, and its functions' starts")
	modelHang     = flag.Bool("model.hang", false, "let tasks lock a mutex they hold, a hang that TestModel must report (TestModelReportsAHang)")
)

// TestModel runs random programs over the whole library (see above).
func TestModel(t *testing.T) {
	n := *modelPrograms
	if n == 0 {
		n = 200
		if testing.Short() {
			n = 50
		}
	}
	// RunSync's warning of a slow wait is expected here, many times.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	// rapid reads its count of checks from its flag at each Check.
	checks := flag.Lookup("rapid.checks")
	old := checks.Value.String()
	checks.Value.Set(strconv.Itoa(n))
	defer checks.Value.Set(old)
	var programs, steps atomic.Int64
	// The report of the last program that hung, the smallest once rapid
	// has shrunk it: rapid's own output shows only its draws.
	var hung string
	// The first program that failed otherwise, which a failure that depends
	// on the schedule may not shrink from.
	var first string
	defer func() {
		if hung != "" {
			t.Log(hung)
		}
		if first != "" {
			t.Log(first)
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		p := drawProgram(rt)
		programs.Add(1)
		steps.Add(int64(len(p.steps)))
		for range max(*modelRepeat, 1) {
			r := runProgram(t, p)
			if r.hung != nil {
				hung = r.hung.report(p, int(r.at.Load()))
				rt.Fatal(hangFailure)
			}
			if r.failure != "" {
				if first == "" {
					first = fmt.Sprintf("the first program that failed: %s\n%s", r.failure, p)
				}
				rt.Fatal(r.failure)
			}
		}
	})
	t.Logf("%d programs run (shrinking included), %d driver steps", programs.Load(), steps.Load())
}

// A program is what rapid draws.
type program struct {
	queues []mqueue
	keyed  int // the queue the Keyed's lanes run on
	steps  []step
	hang   func() // what innerHang does; nil but with -model.hang and in the watchdog's tests
}

// String returns p's queues, then its steps as -model.trace prints them,
// numbered.
func (p *program) String() string {
	var b strings.Builder
	for i, q := range p.queues {
		fmt.Fprintf(&b, "q%d %+v\n", i, q)
	}
	fmt.Fprintf(&b, "the Keyed's lanes run on q%d\n", p.keyed)
	for i, s := range p.steps {
		fmt.Fprintf(&b, "step %d %+v\n", i, s)
	}
	return b.String()
}

// mqueue is a queue of the program.
type mqueue struct {
	parent  int // the index of its target, -1 for a root
	tree    int // the index of its root
	serial  bool
	limit   int
	bounded int // WithMaxQueued, 0 for none
}

// A step is what the driver does next.
type step struct {
	kind int
	q    int           // the queue it acts on
	form int           // the form of a submission
	d    time.Duration // a delay, a sleep, a deadline
	n    int           // a limit, a key, a count of members
	flag bool          // WithCancelOnError, a TryGo
	ctx  int           // -1: a context with a deadline; else a cancelable context's index
	body body
}

// The kinds of steps.
const (
	stepSubmit = iota
	stepKeyed
	stepGroup
	stepCancelCtx
	stepCancelHandle
	stepSuspend
	stepResume
	stepSetLimit
	stepCloseNow
	stepShutdown
	stepCancelKey
	stepSleep
	stepRest
	numSteps
)

// The forms of a submission.
const (
	formGo = iota
	formTryGo
	formRunAsync
	formRunAfter
	formBarrier
	formFuture
	formRunSync
	formThen // a continuation of the latest handle, or RunAsync while there is none
	numForms
)

// A body is what a task does: its nested work, then its end.
type body struct {
	ops []inner
	end int // endReturn, endError, endPanic, endGoexit
}

const (
	endReturn = iota
	endError
	endPanic
	endGoexit
)

// inner is one piece of a task's nested work.
type inner struct {
	kind int
	q    int
	d    time.Duration
}

// The kinds of nested work.
const (
	innerSleep     = iota
	innerInPlace   // RunSync, with the task's context, on its queue or a target above
	innerHelpers   // two goroutines the task waits for do innerInPlace
	innerPull      // an iter.Pull body the task drives does innerInPlace
	innerDown      // RunSync on a queue of a later tree
	innerDownWait  // RunAsync on a queue of a later tree, then Handle.Wait
	innerDownGroup // a group of two on a queue of a later tree, then Wait
	innerDownApply // Apply on a queue of a later tree
	innerSideways  // a wait for work of the task's own tree that is not in place
	innerSubmitOwn // Go on the task's own queue
	numInner
	innerHang = numInner // program.hang, drawn only with -model.hang
)

// errBody is the error a body that fails returns.
var errBody = errors.New("model: the body failed")

func drawProgram(t *rapid.T) *program {
	p := &program{}
	if *modelHang {
		p.hang = lockTwice
	}
	trees := rapid.IntRange(1, 3).Draw(t, "trees")
	for tr := range trees {
		root := len(p.queues)
		p.queues = append(p.queues, drawQueue(t, -1, tr))
		for range rapid.IntRange(0, 2).Draw(t, "children") {
			parent := rapid.IntRange(root, len(p.queues)-1).Draw(t, "parent")
			p.queues = append(p.queues, drawQueue(t, parent, tr))
		}
	}
	p.keyed = rapid.IntRange(0, len(p.queues)-1).Draw(t, "keyed")
	size := 30
	if testing.Short() {
		size = 15
	}
	n := rapid.IntRange(1, size).Draw(t, "steps")
	var slept time.Duration
	for range n {
		s := drawStep(t, p)
		if s.kind == stepSleep {
			if slept+s.d > 5*time.Hour {
				continue // waits that must end have deadlines far beyond the program's time
			}
			slept += s.d
		}
		p.steps = append(p.steps, s)
	}
	return p
}

func drawQueue(t *rapid.T, parent, tree int) mqueue {
	q := mqueue{parent: parent, tree: tree, serial: rapid.Bool().Draw(t, "serial"), limit: 1}
	if !q.serial {
		q.limit = rapid.IntRange(1, 3).Draw(t, "limit")
	}
	if rapid.IntRange(0, 5).Draw(t, "bounded") == 0 {
		q.bounded = rapid.IntRange(1, 3).Draw(t, "maxQueued")
	}
	return q
}

var durations = []time.Duration{0, time.Millisecond, time.Second, time.Minute, time.Hour}

func drawStep(t *rapid.T, p *program) step {
	s := step{
		kind: rapid.IntRange(0, numSteps-1).Draw(t, "step"),
		q:    rapid.IntRange(0, len(p.queues)-1).Draw(t, "q"),
		ctx:  rapid.IntRange(-1, 1).Draw(t, "ctx"),
	}
	switch s.kind {
	case stepSubmit:
		s.form = rapid.IntRange(0, numForms-1).Draw(t, "form")
		s.d = rapid.SampledFrom(durations).Draw(t, "delay")
		s.body = drawBody(t, p, s.q)
	case stepKeyed:
		s.form = rapid.SampledFrom([]int{formGo, formTryGo, formRunAsync, formRunAfter, formRunSync}).Draw(t, "form")
		s.n = rapid.IntRange(0, 3).Draw(t, "key")
		s.d = rapid.SampledFrom(durations).Draw(t, "delay")
		s.body = drawBody(t, p, -1)
	case stepGroup:
		s.n = rapid.IntRange(1, 4).Draw(t, "members")
		s.flag = rapid.Bool().Draw(t, "cancelOnError")
		s.body = drawBody(t, p, s.q)
	case stepCancelHandle:
		s.n = rapid.IntRange(0, 20).Draw(t, "handle")
	case stepSetLimit:
		s.n = rapid.IntRange(1, 3).Draw(t, "limit")
	case stepShutdown:
		s.d = rapid.SampledFrom(durations[1:]).Draw(t, "deadline")
	case stepCancelKey:
		s.n = rapid.IntRange(0, 3).Draw(t, "key")
	case stepSleep:
		s.d = rapid.SampledFrom(durations[1:]).Draw(t, "sleep")
	}
	return s
}

// drawBody draws the body of a task of queue q (-1 for a lane of the
// Keyed, whose nested work is kept to sleeps and the end).
func drawBody(t *rapid.T, p *program, q int) body {
	var b body
	b.end = rapid.IntRange(0, 6).Draw(t, "end") // mostly returns
	if b.end > endGoexit {
		b.end = endReturn
	}
	kinds := numInner
	if p.hang != nil {
		kinds++ // innerHang
	}
	for range rapid.IntRange(0, 2).Draw(t, "inner") {
		in := inner{kind: rapid.IntRange(0, kinds-1).Draw(t, "kind"), d: rapid.SampledFrom(durations).Draw(t, "d")}
		var choices []int
		switch in.kind {
		case innerInPlace, innerHelpers, innerPull:
			choices = p.path(q)
		case innerDown, innerDownWait, innerDownGroup, innerDownApply:
			choices = p.later(q)
		case innerSideways:
			choices = p.sideways(q)
		case innerSubmitOwn:
			choices = p.path(q)[:min(1, len(p.path(q)))]
		default:
			choices = []int{-1}
		}
		if len(choices) == 0 {
			continue
		}
		in.q = rapid.SampledFrom(choices).Draw(t, "on")
		b.ops = append(b.ops, in)
	}
	return b
}

// path returns q and the targets above it, or nothing for -1.
func (p *program) path(q int) []int {
	var qs []int
	for ; q >= 0; q = p.queues[q].parent {
		qs = append(qs, q)
	}
	return qs
}

// later returns the queues of the trees after q's.
func (p *program) later(q int) []int {
	if q < 0 {
		return nil
	}
	var qs []int
	for i, mq := range p.queues {
		if mq.tree > p.queues[q].tree {
			qs = append(qs, i)
		}
	}
	return qs
}

// sideways returns the queues of q's tree that are not on q's path.
func (p *program) sideways(q int) []int {
	if q < 0 {
		return nil
	}
	var qs []int
	for i, mq := range p.queues {
		if mq.tree == p.queues[q].tree && !slices.Contains(p.path(q), i) {
			qs = append(qs, i)
		}
	}
	return qs
}

// selfWait reports whether a task of queue w, waiting for work of queue a,
// holds the one slot of a serial queue that the work needs.
func (p *program) selfWait(w, a int) bool {
	for _, x := range p.path(w) {
		if p.queues[x].serial && slices.Contains(p.path(a), x) {
			return true
		}
	}
	return false
}

// A run is a program being run, and what the reference saw.
type run struct {
	p         *program
	bubble    atomic.Uint64 // the bubble the program runs in, once known
	at        atomic.Int32  // the step the driver is in; len(p.steps) at the end
	ended     chan struct{} // closed when the bubble has ended
	hung      *hang         // what the watchdog found, if the program hung
	queues    []*taskqueue.Queue
	keyed     *taskqueue.Keyed[int]
	gauges    []gauge
	ctxs      []context.Context
	ctxCancel []context.CancelFunc // of ctxs
	cancels   []context.CancelFunc // every context's, called at the end

	mu       sync.Mutex
	failure  string
	handles  []tracked
	books    []books // per queue
	lane     books   // the Keyed's lanes
	fifo     []fifo  // per serial queue: the driver's submissions in order
	nextID   int
	ranCount map[int]int
	waiters  sync.WaitGroup // the driver's goroutines that wait for groups
}

// gauge is a queue's count of functions that run and hold its slots, and
// what the model allows.
type gauge struct {
	now       atomic.Int64
	limit     atomic.Int64
	suspended atomic.Int32 // Suspend calls not yet resumed
}

// books is what the reference counts of a queue's submissions.
type books struct {
	subs, ran, failed, panicked int
	inexact                     bool // Apply's helpers count as tasks of their own
}

type fifo struct {
	next    int // the next sequence number to hand out
	started []int
}

// tracked is a handle the driver holds, with the function's identity.
type tracked struct {
	h    *taskqueue.Handle
	id   int
	q    int               // -1 for a lane
	prev *taskqueue.Handle // a continuation's antecedent, whose failure is its own; nil for others
}

func (r *run) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failure == "" {
		r.failure = fmt.Sprintf(format, args...)
	}
}

// runProgram runs p in a bubble of its own. If the watchdog finds it hung,
// it returns at once with r.hung set, leaving the bubble's goroutines
// blocked; the caller must then read nothing else of r, which they may
// hold, until r.ended is closed, if ever.
func runProgram(t *testing.T, p *program) *run {
	r := &run{p: p, ranCount: map[int]int{}, ended: make(chan struct{})}
	var crash any
	go func() {
		defer close(r.ended)
		defer func() { crash = recover() }()
		synctest.Test(t, func(t *testing.T) {
			r.bubble.Store(myBubble())
			r.exec(t)
		})
	}()
	if r.hung = watchBubble(r.ended, &r.bubble); r.hung != nil {
		return r
	}
	if crash != nil {
		msg := fmt.Sprint(crash)
		if i := strings.Index(msg, "\n"); i > 0 {
			msg = msg[:i]
		}
		r.fail("the program crashed its bubble: %s", msg)
	}
	return r
}

// exec runs the program in the bubble, then shuts it down and checks it.
func (r *run) exec(t *testing.T) {
	p := r.p
	silent := taskqueue.WithPanicHandler(func(*taskqueue.PanicError) {})
	r.queues = make([]*taskqueue.Queue, len(p.queues))
	r.gauges = make([]gauge, len(p.queues))
	r.books = make([]books, len(p.queues))
	r.fifo = make([]fifo, len(p.queues))
	for i, mq := range p.queues {
		opts := []taskqueue.Option{silent, taskqueue.WithName(fmt.Sprintf("q%d", i))}
		if mq.parent >= 0 {
			opts = append(opts, taskqueue.WithTarget(r.queues[mq.parent]), taskqueue.WithQuantum(2))
		}
		if mq.bounded > 0 {
			opts = append(opts, taskqueue.WithMaxQueued(mq.bounded))
		}
		if mq.serial {
			r.queues[i] = taskqueue.NewSerial(opts...)
		} else {
			r.queues[i] = taskqueue.NewConcurrent(mq.limit, opts...)
		}
		r.gauges[i].limit.Store(int64(mq.limit))
	}
	r.keyed = taskqueue.NewKeyed[int](r.queues[p.keyed], silent)
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		r.ctxs, r.cancels = append(r.ctxs, ctx), append(r.cancels, cancel)
	}
	r.ctxCancel = slices.Clone(r.cancels) // the two the program's steps cancel
	for i, s := range p.steps {
		r.at.Store(int32(i))
		r.step(s)
	}
	r.at.Store(int32(len(p.steps)))
	// The end: everything resumed, every root shut down, which waits for
	// the delayed tasks too, then the driver's goroutines.
	for i := range r.queues {
		for r.gauges[i].suspended.Load() > 0 {
			r.resume(i)
		}
	}
	for i, mq := range p.queues {
		if mq.parent < 0 {
			if err := r.queues[i].Shutdown(context.Background()); err != nil {
				r.fail("Shutdown of root q%d at the end: %v", i, err)
			}
		}
	}
	r.waiters.Wait()
	synctest.Wait()
	r.check()
	r.mu.Lock()
	cancels := r.cancels
	r.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
}

// ctx returns the context of a driver's submission. One that the driver
// waits with has a deadline: the queue it waits for may be suspended until
// a later step of the driver's.
// The context lives until the end of the program: tasks submitted with it
// run with it.
func (r *run) ctx(s step) context.Context {
	parent := context.Background()
	if s.ctx >= 0 {
		parent = r.ctxs[s.ctx]
		if s.form != formRunSync && s.kind != stepGroup && r.p.queues[s.q].bounded == 0 {
			return parent
		}
	}
	ctx, cancel := context.WithTimeout(parent, time.Hour)
	r.mu.Lock()
	r.cancels = append(r.cancels, cancel)
	r.mu.Unlock()
	return ctx
}

func (r *run) step(s step) {
	if *modelTrace {
		fmt.Printf("step %+v\n", s)
		defer func() {
			for i, q := range r.queues {
				fmt.Printf("   q%d %+v\n", i, q.Stats())
			}
		}()
	}
	switch s.kind {
	case stepSubmit:
		r.submit(s)
	case stepKeyed:
		r.submitKeyed(s)
	case stepGroup:
		r.group(s)
	case stepCancelCtx:
		r.ctxCancel[max(s.ctx, 0)]()
	case stepCancelHandle:
		r.mu.Lock()
		var h *taskqueue.Handle
		if s.n < len(r.handles) {
			h = r.handles[s.n].h
		}
		r.mu.Unlock()
		if h != nil {
			h.Cancel()
		}
	case stepSuspend:
		synctest.Wait() // no start in flight
		r.queues[s.q].Suspend()
		r.gauges[s.q].suspended.Add(1)
	case stepResume:
		if r.gauges[s.q].suspended.Load() > 0 {
			r.resume(s.q)
		}
	case stepSetLimit:
		if !r.p.queues[s.q].serial {
			synctest.Wait()
			r.queues[s.q].SetLimit(s.n)
			r.gauges[s.q].limit.Store(int64(s.n))
		}
	case stepCloseNow:
		synctest.Wait() // nothing else cancels meanwhile: the count is exact
		// Looking at the antecedents (IsDone) cancels those whose context is
		// done, which must count before CloseNow does.
		waiting := r.continuationsWaiting(s.q)
		before := r.canceled(s.q)
		n := r.queues[s.q].CloseNow()
		synctest.Wait()
		got := r.canceled(s.q) - before - r.endedWithTheirAntecedents(waiting)
		if uint64(n) != got {
			r.fail("CloseNow of q%d returned %d; Stats.Canceled grew by %d, continuations that ended with their antecedents aside", s.q, n, got)
		}
	case stepShutdown:
		ctx, cancel := context.WithTimeout(context.Background(), s.d)
		err := r.queues[s.q].Shutdown(ctx)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			r.fail("Shutdown of q%d: %v", s.q, err)
		}
	case stepCancelKey:
		r.keyed.CancelKey(s.n)
	case stepSleep:
		time.Sleep(s.d)
	case stepRest:
		synctest.Wait()
	}
}

// continuationsWaiting returns the tracked continuations of q that wait for
// their antecedents, which have not ended.
func (r *run) continuationsWaiting(q int) []tracked {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ts []tracked
	for _, tr := range r.handles {
		if tr.q == q && tr.prev != nil && !tr.h.IsDone() && !tr.prev.IsDone() {
			ts = append(ts, tr)
		}
	}
	return ts
}

// endedWithTheirAntecedents counts those of ts that have ended with their
// antecedent's failure, as Then says: CloseNow canceled the antecedent, and
// the continuation, canceled in turn, is not CloseNow's count.
func (r *run) endedWithTheirAntecedents(ts []tracked) uint64 {
	var n uint64
	for _, tr := range ts {
		if err := tr.h.Err(); err != nil && err == tr.prev.Err() {
			n++
		}
	}
	return n
}

// canceled returns the Canceled count of q: CloseNow cancels q's own tasks
// (its children are closed, and run what they accepted), and what that
// cancels in turn (a group canceled by a member that CloseNow failed, and
// the tasks submitted with its context) is not CloseNow's count.
func (r *run) canceled(q int) uint64 {
	return r.queues[q].Stats().Canceled
}

func (r *run) resume(q int) {
	synctest.Wait()
	r.gauges[q].suspended.Add(-1)
	r.queues[q].Resume()
}

// newID returns the identity of a function of queue q (-1: a lane).
func (r *run) newID(q int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	if q >= 0 {
		r.books[q].subs++
	} else {
		r.lane.subs++
	}
	return r.nextID
}

// unsubmit takes back a submission that did not happen (TryGo reported
// false).
func (r *run) unsubmit(q int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if q >= 0 {
		r.books[q].subs--
	} else {
		r.lane.subs--
	}
}

// submit is a driver's submission of a task to a queue.
func (r *run) submit(s step) {
	q := r.queues[s.q]
	ctx := r.ctx(s)
	id := r.newID(s.q)
	seq := -1
	if r.p.queues[s.q].serial && (s.form == formGo || s.form == formRunAsync || s.form == formBarrier || s.form == formFuture) {
		r.mu.Lock()
		seq = r.fifo[s.q].next
		r.fifo[s.q].next++
		r.mu.Unlock()
	}
	task := func(tctx context.Context) error { return r.body(tctx, id, s.q, s.body, seq) }
	goBody := goBody(s.body)
	switch s.form {
	case formGo:
		if q.Go(func() { r.body(context.Background(), id, s.q, goBody, seq) }) != nil {
			r.noSeq(s.q, seq)
		}
	case formTryGo:
		if !q.TryGo(func() { r.body(context.Background(), id, s.q, goBody, -1) }) {
			r.unsubmit(s.q)
		}
	case formRunAsync:
		r.track(q.RunAsync(ctx, task), id, s.q)
	case formRunAfter:
		r.track(q.RunAfter(ctx, s.d, task), id, s.q)
	case formBarrier:
		r.track(q.RunBarrier(ctx, task), id, s.q)
	case formFuture:
		f := taskqueue.RunAsync(ctx, q, func(tctx context.Context) (int, error) { return id, task(tctx) })
		r.track(&f.Handle, id, s.q)
	case formThen:
		r.mu.Lock()
		var prev *taskqueue.Handle
		if n := len(r.handles); n > 0 {
			prev = r.handles[n-1].h
		}
		r.mu.Unlock()
		if prev == nil {
			r.track(q.RunAsync(ctx, task), id, s.q)
			return
		}
		h := prev.Then(ctx, q, task)
		r.mu.Lock()
		r.handles = append(r.handles, tracked{h: h, id: id, q: s.q, prev: prev})
		r.mu.Unlock()
	case formRunSync:
		if s.body.end == endGoexit {
			s.body.end = endReturn // it would end the driver
		}
		var err error
		testkit.PanicValue(func() { err = q.RunSync(ctx, task) })
		_ = err
	}
}

// noSeq forgets a sequence number that no task will use.
func (r *run) noSeq(q, seq int) {
	if seq >= 0 {
		r.mu.Lock()
		r.fifo[q].started = append(r.fifo[q].started, -seq-1) // a hole the order check skips
		r.mu.Unlock()
	}
}

func (r *run) track(h *taskqueue.Handle, id, q int) {
	r.mu.Lock()
	r.handles = append(r.handles, tracked{h: h, id: id, q: q})
	r.mu.Unlock()
}

func (r *run) submitKeyed(s step) {
	ctx := r.ctx(s)
	id := r.newID(-1)
	task := func(tctx context.Context) error { return r.body(tctx, id, -1, s.body, -1) }
	goBody := goBody(s.body)
	switch s.form {
	case formGo:
		r.keyed.Go(s.n, func() { r.body(context.Background(), id, -1, goBody, -1) })
	case formTryGo:
		if !r.keyed.TryGo(s.n, func() { r.body(context.Background(), id, -1, goBody, -1) }) {
			r.unsubmit(-1)
		}
	case formRunAsync:
		r.track(r.keyed.RunAsync(ctx, s.n, task), id, -1)
	case formRunAfter:
		r.track(r.keyed.RunAfter(ctx, s.n, s.d, task), id, -1)
	default:
		if s.body.end == endGoexit {
			s.body.end = endReturn
		}
		testkit.PanicValue(func() { r.keyed.RunSync(ctx, s.n, task) })
	}
}

// group runs a group of members on a queue, waited for by a goroutine of
// the driver, which checks that no member runs once Wait has returned.
func (r *run) group(s step) {
	ctx := r.ctx(s)
	var opts []taskqueue.GroupOption
	if s.flag {
		opts = append(opts, taskqueue.WithCancelOnError())
	}
	g := taskqueue.NewGroup(ctx, r.queues[s.q], opts...)
	var running atomic.Int32
	for i := range s.n {
		id := r.newID(s.q)
		f := func(mctx context.Context) error {
			running.Add(1)
			defer running.Add(-1)
			return r.body(mctx, id, s.q, s.body, -1)
		}
		if i == 0 && s.flag {
			if !g.TryGo(f) {
				r.unsubmit(s.q)
			}
			continue
		}
		g.Go(f)
	}
	r.waiters.Go(func() {
		g.Wait(ctx)
		if n := running.Load(); n != 0 {
			r.fail("Group.Wait on q%d returned while %d members ran", s.q, n)
		}
	})
}

// goBody returns what a function of Go, which takes no context and returns
// no error, does of b: it sleeps and ends, failing only by a panic or
// runtime.Goexit.
func goBody(b body) body {
	g := body{end: b.end}
	if g.end == endError {
		g.end = endReturn
	}
	for _, in := range b.ops {
		if in.kind == innerSleep {
			g.ops = append(g.ops, in)
		}
	}
	return g
}

// Who holds the slots a function runs on, above the ones it takes (see
// enter): nobody, or its task on every level (a call in the task's place).
const (
	heldByNone = -1
	heldByTask = -2
)

// enter counts a function of q in, on q and the targets above it, and
// checks the limits; a start (not a resume after a wait in place) must not
// happen while q or a target above it is suspended, unless the function
// runs in a task's place, which Suspend lets go on. heldBy says where it
// does: heldByTask on every level; the queue of a task that calls RunSync
// on a queue below it, whose function runs in the task's place on the slots
// the task holds (its queue and the targets above) and takes new ones only
// below, where only those levels' own limits and suspensions count
// (TryRun's rule); or heldByNone.
func (r *run) enter(q int, start bool, heldBy int) {
	for _, a := range r.p.path(q) {
		g := &r.gauges[a]
		n := g.now.Add(1)
		inPlace := heldBy == heldByTask || heldBy >= 0 && slices.Contains(r.p.path(heldBy), a)
		// A function in a task's place runs on the task's slot, held
		// already, even above a limit that SetLimit lowered meanwhile.
		if start && !inPlace && n > g.limit.Load() {
			if *modelTrace {
				fmt.Printf("OVER q%d n=%d entering a function of q%d at %v\n%+v\n", a, n, q, time.Now(), r.queues[a].Stats())
			}
			r.fail("q%d ran %d functions at once; its limit is %d", a, n, g.limit.Load())
		}
		if start && !inPlace && g.suspended.Load() > 0 {
			r.fail("a function of q%d started while q%d was suspended", q, a)
		}
	}
}

func (r *run) leave(q int) {
	for _, a := range r.p.path(q) {
		r.gauges[a].now.Add(-1)
	}
}

// body runs the body of function id of queue q (-1: a lane), which holds
// q's slot, with the task's context (Background for a task of Go).
func (r *run) body(ctx context.Context, id, q int, b body, seq int) error {
	return r.bodyHeld(ctx, id, q, b, seq, heldByNone)
}

// bodyHeld is body for a function that may run in the place of a task of
// queue heldBy (see enter).
func (r *run) bodyHeld(ctx context.Context, id, q int, b body, seq, heldBy int) error {
	r.mu.Lock()
	r.ranCount[id]++
	if r.ranCount[id] > 1 {
		r.failure = fmt.Sprintf("function %d ran %d times", id, r.ranCount[id])
	}
	if q >= 0 {
		r.books[q].ran++
		switch b.end {
		case endError, endGoexit:
			r.books[q].failed++
		case endPanic:
			r.books[q].panicked++
		}
	} else {
		r.lane.ran++
		switch b.end {
		case endError, endGoexit:
			r.lane.failed++
		case endPanic:
			r.lane.panicked++
		}
	}
	if seq >= 0 {
		r.fifo[q].started = append(r.fifo[q].started, seq)
	}
	r.mu.Unlock()
	if q >= 0 {
		if *modelTrace {
			fmt.Printf("  start fn %d of q%d at %v\n", id, q, time.Now())
			defer func() { fmt.Printf("  end fn %d of q%d at %v\n", id, q, time.Now()) }()
		}
		r.enter(q, true, heldBy)
		defer r.leave(q)
	}
	for _, in := range b.ops {
		r.inner(ctx, q, in)
	}
	switch b.end {
	case endError:
		return errBody
	case endPanic:
		panic("model: the body panicked")
	case endGoexit:
		runtime.Goexit()
	}
	return nil
}

// inner does one piece of nested work for a task of queue q.
func (r *run) inner(ctx context.Context, q int, in inner) {
	switch in.kind {
	case innerSleep:
		time.Sleep(in.d)
	case innerInPlace:
		r.inPlace(ctx, q, in.q)
	case innerHelpers:
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { r.inPlace(ctx, -1, in.q) })
		}
		r.leave(q) // the task waits: its helpers run in its place
		wg.Wait()
		r.enter(q, false, heldByNone)
	case innerPull:
		next, stop := iter.Pull(func(yield func(int) bool) {
			r.inPlace(ctx, -1, in.q)
			yield(1)
		})
		r.leave(q)
		next()
		stop()
		r.enter(q, false, heldByNone)
	case innerDown, innerDownWait, innerDownGroup, innerDownApply:
		r.down(ctx, in)
	case innerSideways:
		r.sideways(ctx, q, in)
	case innerSubmitOwn:
		id := r.newID(in.q)
		if r.queues[in.q].Go(func() { r.body(context.Background(), id, in.q, body{}, -1) }) != nil {
			return // refused: counted as Rejected
		}
	case innerHang:
		r.p.hang()
	}
}

// lockTwice locks a mutex it holds: the kind of hang the watchdog is for
// (RunAfter once waited so for a lock it held), which -model.hang lets
// tasks do.
func lockTwice() {
	var mu sync.Mutex
	mu.Lock()
	mu.Lock()
}

// inPlace calls RunSync, with the task's context, on a queue on the task's
// path, from the task (q, which waits meanwhile) or from a goroutine that
// works for it (q = -1): the function must run in the task's place, once.
func (r *run) inPlace(ctx context.Context, q, on int) {
	id := r.newID(on)
	if q >= 0 {
		r.leave(q)
		defer r.enter(q, false, heldByNone)
	}
	var ran atomic.Int32
	err := r.queues[on].RunSync(ctx, func(context.Context) error {
		ran.Add(1)
		r.mu.Lock()
		r.ranCount[id]++
		r.books[on].ran++
		r.mu.Unlock()
		r.enter(on, true, heldByTask)
		r.leave(on)
		return nil
	})
	switch {
	case err != nil && ran.Load() == 0 && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// The task's context was done before the call, or while a helper
		// waited for its turn: the call gave up, as documented.
	case err != nil || ran.Load() != 1:
		r.fail("RunSync in a task's place on q%d: %v, ran %d times; want nil, once", on, err, ran.Load())
	}
}

// down waits for work of a later tree: the docs say such a wait ends.
func (r *run) down(task context.Context, in inner) {
	ctx, cancel := context.WithTimeout(task, 10000*time.Hour)
	defer cancel()
	q := r.queues[in.q]
	var err error
	switch in.kind {
	case innerDown:
		id := r.newID(in.q)
		err = q.RunSync(ctx, func(tctx context.Context) error { return r.body(tctx, id, in.q, body{}, -1) })
	case innerDownWait:
		id := r.newID(in.q)
		h := q.RunAsync(ctx, func(tctx context.Context) error { return r.body(tctx, id, in.q, body{}, -1) })
		r.track(h, id, in.q)
		err = h.Wait(ctx)
	case innerDownGroup:
		g := taskqueue.NewGroup(ctx, q)
		for range 2 {
			id := r.newID(in.q)
			g.Go(func(mctx context.Context) error { return r.body(mctx, id, in.q, body{}, -1) })
		}
		err = g.Wait(ctx)
	case innerDownApply:
		r.mu.Lock()
		r.books[in.q].inexact = true
		r.mu.Unlock()
		var calls atomic.Int32
		err = taskqueue.Apply(ctx, q, 8, func(int) { calls.Add(1) })
		if err == nil && calls.Load() != 8 {
			r.fail("Apply on q%d returned nil after %d calls of 8", in.q, calls.Load())
		}
	}
	if errors.Is(err, context.DeadlineExceeded) && task.Err() == nil {
		// (The task's own context may end first: then so does the wait.)
		r.fail("a wait for work of a later tree (q%d, kind %d) ran out of time: the docs say it ends", in.q, in.kind)
	}
}

// sideways waits for work of the task's own tree that does not run in its
// place: it may end, last until its deadline (every slot it needs held by
// waits), or panic if it holds the one slot of a serial queue the work
// needs, and only then.
func (r *run) sideways(ctx context.Context, q int, in inner) {
	ctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	id := r.newID(in.q)
	work := func(tctx context.Context) error { return r.body(tctx, id, in.q, body{}, -1) }
	msg := testkit.PanicMessage(func() {
		if in.d < time.Second { // the draw of d picks the kind of wait, too
			// On an idle queue of the tree, the function runs on the
			// caller, in its place on the slots it holds of the targets:
			// the task pauses meanwhile, as for a call in its place. A
			// target it holds may be suspended meanwhile: the function
			// runs all the same, as a call in its place does.
			r.leave(q)
			defer r.enter(q, false, heldByNone)
			r.queues[in.q].RunSync(ctx, func(tctx context.Context) error {
				return r.bodyHeld(tctx, id, in.q, body{}, -1, q)
			})
			return
		}
		h := r.queues[in.q].RunAsync(ctx, work)
		r.track(h, id, in.q)
		h.Wait(ctx)
	})
	if msg != "" && in.d < time.Second {
		r.unsubmit(in.q) // a RunSync that panics so has submitted nothing
	}
	switch {
	case msg == "":
	case !strings.HasSuffix(msg, "which would wait for itself"):
		r.fail("a wait of a task of q%d for q%d panicked: %s", q, in.q, msg)
	case !r.p.selfWait(q, in.q):
		r.fail("a wait of a task of q%d for q%d panicked as a wait for itself, though it holds no serial slot the work needs: %s", q, in.q, msg)
	}
}

// check compares what the library says, once the program has ended, with
// the reference.
func (r *run) check() {
	r.mu.Lock()
	handles := slices.Clone(r.handles)
	r.mu.Unlock()
	for _, tr := range handles {
		if !tr.h.IsDone() {
			r.fail("a handle of q%d is not done once every queue is shut down", tr.q)
			continue
		}
		ran := r.ranCount[tr.id] > 0
		switch err := tr.h.Err(); {
		case ran:
			// The body's end is checked by the Stats below.
		case errors.Is(err, taskqueue.ErrClosed), errors.Is(err, taskqueue.ErrQueueFull),
			errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		case tr.prev != nil && err != nil && err == tr.prev.Err():
			// A continuation whose antecedent failed ends with its error.
		default:
			r.fail("a handle of q%d whose function never ran ended with %v", tr.q, err)
		}
	}
	for q, f := range r.fifo {
		last := -1
		for _, seq := range f.started {
			if seq < 0 {
				continue
			}
			if seq < last {
				r.fail("serial q%d started its tasks in the order %v", q, f.started)
				break
			}
			last = seq
		}
	}
	for q, b := range r.books {
		st := r.queues[q].Stats()
		r.checkStats(fmt.Sprintf("q%d", q), st, b)
	}
	r.checkStats("the Keyed's lanes", r.keyed.Total(), r.lane)
	if n := r.keyed.Lanes(); n != 0 {
		r.fail("%d lanes are left once everything ran", n)
	}
}

func (r *run) checkStats(name string, st taskqueue.Stats, b books) {
	switch {
	case st.Queued != 0 || st.Delayed != 0 || st.Running != 0:
		r.fail("%s at the end: %+v; want nothing queued, delayed or running", name, st)
	case st.Completed != st.Succeeded+st.Failed+st.Panicked:
		r.fail("%s: Completed %d != Succeeded %d + Failed %d + Panicked %d", name, st.Completed, st.Succeeded, st.Failed, st.Panicked)
	case b.inexact:
	case st.Completed != uint64(b.ran) || st.Failed != uint64(b.failed) || st.Panicked != uint64(b.panicked):
		r.fail("%s: %+v; the reference ran %d functions, %d failed, %d panicked", name, st, b.ran, b.failed, b.panicked)
	case st.Completed+st.Canceled+st.Rejected != uint64(b.subs):
		r.fail("%s: Completed %d + Canceled %d + Rejected %d != %d submissions", name, st.Completed, st.Canceled, st.Rejected, b.subs)
	}
}
