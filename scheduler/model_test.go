package scheduler_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// The model of the package: random programs over a random tree of
// schedulers (a root, children, grandchildren, with limits, bounds, quanta
// and priorities), run in a testing/synctest bubble, so that after each step
// the test waits until every goroutine of the tree is blocked
// (synctest.Wait) and compares the tree with a plain reference: per
// scheduler, the items queued on it in order, each queued, running, ended or
// removed, and the counts the contract fixes (suspensions, limits,
// reservations, holds, completions, panics). A hang is reported by the
// runtime as a deadlock of the bubble.
//
// What the contract fixes exactly, the model checks exactly: which calls
// succeed (Enqueue, Reserve, TryDequeue, TryRun, TryEnqueue, CloseNow),
// Stats, Holds, Held, panics, the IDs. Which items have started it checks
// by the rules (each scheduler starts its items in order; no start beyond
// a limit, under a suspension or beside a barrier; no item waits without
// one of those, or a barrier queued above it, to hold it back), since which
// of two children a target serves first is its own affair. Where the answer
// depends on the turns of the tree, which the reference does not follow
// (TryRun from an item when a scheduler above the path it takes is held
// back; idleness where a turn asked for items since removed may wait), the
// model accepts either answer and checks what follows from it.

// itemState is where an item of the model is, in the reference.
type itemState int

const (
	queued  itemState = iota
	running           // started and not yet returned
	ended             // returned, panicked or called runtime.Goexit
	removed           // TryDequeue, DequeueAll or CloseNow took it out
)

// modelItem is a Task of the model: it records its runs and its slot, then
// runs the functions sent to it on its goroutine until released.
type modelItem struct {
	node      *modelNode
	barrier   bool
	carried   bool // queued by Requeue: takes no room
	mustStart bool // TryEnqueue queued it: it starts at once
	id        scheduler.ID
	state     itemState
	release   chan struct{}
	do        chan func()
	runs      atomic.Int32
	slot      scheduler.Slot // set when it starts, read after synctest.Wait
}

func (it *modelItem) Run(sl scheduler.Slot) {
	it.slot = sl
	it.runs.Add(1)
	for {
		select {
		case f := <-it.do:
			f()
		case <-it.release:
			return
		}
	}
}

// onItem runs f on the goroutine of the running item it and waits for it.
func (it *modelItem) onItem(f func()) {
	done := make(chan struct{})
	it.do <- func() { defer close(done); f() }
	<-done
}

// task returns it as it is to be queued: marked if it is a barrier.
func (it *modelItem) task() scheduler.Task {
	if it.barrier {
		return scheduler.Barrier(it)
	}
	return it
}

// modelNode is a scheduler of the model's tree and its reference.
type modelNode struct {
	name       string
	s          *scheduler.Scheduler
	up         *modelNode
	limit      int
	bound      int // WithMaxPending; 0: unbounded
	suspends   int
	closed     bool         // Close or CloseNow was called on it
	items      []*modelItem // every item queued on it, in order
	reserved   []*scheduler.Reservation
	holds      []scheduler.Hold
	completed  uint64
	wantPanics int32
	panics     atomic.Int32 // counted by its panic handler
	idles      atomic.Int32 // counted by its idle function
	lastID     scheduler.ID
	wasIdle    int // 1 idle, 0 not, -1 unknown: after the last step
	occBefore  int // its subtree's running items after the last step
}

// chain returns n and the targets above it, n first.
func (n *modelNode) chain() []*modelNode {
	var c []*modelNode
	for a := n; a != nil; a = a.up {
		c = append(c, a)
	}
	return c
}

// below reports whether n is d or above it.
func (n *modelNode) below(d *modelNode) bool {
	return slices.Contains(d.chain(), n)
}

// isClosed is the reference's Closed: n or a target above it was closed.
func (n *modelNode) isClosed() bool {
	return slices.ContainsFunc(n.chain(), func(a *modelNode) bool { return a.closed })
}

// count returns the number of n's own items in state st.
func (n *modelNode) count(st itemState) int {
	k := 0
	for _, it := range n.items {
		if it.state == st {
			k++
		}
	}
	return k
}

// room returns the room of n's list taken: its items queued but not
// requeued, and its reservations.
func (n *modelNode) room() int {
	k := len(n.reserved)
	for _, it := range n.items {
		if it.state == queued && !it.carried {
			k++
		}
	}
	return k
}

// wantErr returns what Enqueue and Reserve on n must return now.
func (n *modelNode) wantErr() error {
	switch {
	case n.isClosed():
		return scheduler.ErrClosed
	case n.bound > 0 && n.room() >= n.bound:
		return scheduler.ErrFull
	}
	return nil
}

// modelMachine runs a tree of Schedulers and its reference side by side.
type modelMachine struct {
	nodes []*modelNode
	items []*modelItem
}

func newModelMachine(t *rapid.T) *modelMachine {
	m := &modelMachine{}
	for i := range rapid.IntRange(1, 5).Draw(t, "nodes") {
		n := &modelNode{name: fmt.Sprint("node ", i), limit: rapid.IntRange(1, 3).Draw(t, "limit"), wasIdle: 1}
		opts := []scheduler.Option{
			scheduler.WithPanicHandler(func(*scheduler.PanicError) { n.panics.Add(1) }),
			scheduler.WithIdleFunc(func() { n.idles.Add(1) }),
		}
		if n.bound = rapid.IntRange(0, 3).Draw(t, "bound"); n.bound > 0 {
			opts = append(opts, scheduler.WithMaxPending(n.bound))
		}
		if i > 0 {
			n.up = m.nodes[rapid.IntRange(0, i-1).Draw(t, "target")]
			opts = append(opts, scheduler.WithTarget(n.up.s),
				scheduler.WithQuantum(rapid.IntRange(1, 3).Draw(t, "quantum")),
				scheduler.WithPriority(rapid.IntRange(-1, 1).Draw(t, "priority")))
		}
		n.s = scheduler.New(n.limit, opts...)
		m.nodes = append(m.nodes, n)
	}
	return m
}

func (m *modelMachine) node(t *rapid.T) *modelNode {
	return m.nodes[rapid.IntRange(0, len(m.nodes)-1).Draw(t, "node")]
}

// pick returns an item in one of the states given, or skips the step.
func (m *modelMachine) pick(t *rapid.T, states ...itemState) *modelItem {
	var in []*modelItem
	for _, it := range m.items {
		if slices.Contains(states, it.state) {
			in = append(in, it)
		}
	}
	if len(in) == 0 {
		t.Skip("no such item")
	}
	return in[rapid.IntRange(0, len(in)-1).Draw(t, "item")]
}

// newItem makes an item for n, a barrier now and then.
func (m *modelMachine) newItem(t *rapid.T, n *modelNode) *modelItem {
	return &modelItem{node: n, barrier: rapid.IntRange(0, 5).Draw(t, "barrier") == 0,
		release: make(chan struct{}), do: make(chan func())}
}

// queue records it, just queued with the ID id (0 from TryEnqueue, which
// gives none): IDs increase.
func (m *modelMachine) queue(t *rapid.T, it *modelItem, id scheduler.ID) {
	n := it.node
	if id != 0 && id <= n.lastID {
		t.Fatalf("%s: an item queued with ID %d after ID %d", n.name, id, n.lastID)
	}
	n.lastID = max(n.lastID, id)
	it.id = id
	n.items = append(n.items, it)
	m.items = append(m.items, it)
}

// Enqueue queues an item, which fails on a closed or full list.
func (m *modelMachine) Enqueue(t *rapid.T) {
	n := m.node(t)
	it := m.newItem(t, n)
	want := n.wantErr()
	id, err := n.s.Enqueue(it.task())
	if err == nil {
		m.queue(t, it, id) // before any failure, so that finish releases it
	}
	if err != want {
		t.Fatalf("%s: Enqueue = %v; want %v", n.name, err, want)
	}
}

// Requeue queues an item whatever the state of the list.
func (m *modelMachine) Requeue(t *rapid.T) {
	n := m.node(t)
	it := m.newItem(t, n)
	it.carried, it.barrier = true, false // Requeue takes no barrier
	m.queue(t, it, n.s.Requeue(it.task()))
}

// TryEnqueue queues an item if it starts at once.
func (m *modelMachine) TryEnqueue(t *rapid.T) {
	n := m.node(t)
	it := m.newItem(t, n)
	want := m.tryEnqueueAnswer(n, it.barrier)
	got := n.s.TryEnqueue(it.task())
	if got {
		it.mustStart = true
		m.queue(t, it, 0)
	}
	if got != want {
		t.Fatalf("%s: TryEnqueue = %v; want %v", n.name, got, want)
	}
}

// Reserve takes room for an item, which fails as Enqueue does.
func (m *modelMachine) Reserve(t *rapid.T) {
	n := m.node(t)
	want := n.wantErr()
	r, err := n.s.Reserve()
	if err == nil {
		n.reserved = append(n.reserved, r)
	}
	if err != want {
		t.Fatalf("%s: Reserve = %v; want %v", n.name, err, want)
	}
}

// UseReservation queues an item on a reservation, or gives the room back.
func (m *modelMachine) UseReservation(t *rapid.T) {
	n := m.node(t)
	if len(n.reserved) == 0 {
		t.Skip("no reservation")
	}
	k := rapid.IntRange(0, len(n.reserved)-1).Draw(t, "reservation")
	r := n.reserved[k]
	n.reserved = slices.Delete(n.reserved, k, k+1)
	if rapid.Bool().Draw(t, "cancel") {
		if !r.Cancel() {
			t.Fatalf("%s: Cancel of an unused reservation = false", n.name)
		}
		return
	}
	it := m.newItem(t, n)
	m.queue(t, it, r.Enqueue(it.task()))
}

// Finish ends a running item: it returns, panics or calls runtime.Goexit.
func (m *modelMachine) Finish(t *rapid.T) {
	it := m.pick(t, running)
	switch rapid.IntRange(0, 2).Draw(t, "how") {
	case 0:
		close(it.release)
	case 1:
		it.do <- func() { close(it.release); panic("model") }
		it.node.wantPanics++
	default:
		it.do <- func() { close(it.release); runtime.Goexit() }
	}
	it.state = ended
	it.node.completed++
}

// Dequeue tries to remove any item ever queued, or, now and then, the
// item of any ID up to the last given, which may name another scheduler's
// item or a child's turn, neither of which it may remove.
func (m *modelMachine) Dequeue(t *rapid.T) {
	n, id := (*modelNode)(nil), scheduler.ID(0)
	if rapid.IntRange(0, 3).Draw(t, "any ID") == 0 {
		n = m.node(t)
		id = scheduler.ID(rapid.Uint64Range(0, uint64(n.lastID)+1).Draw(t, "id"))
	} else {
		it := m.pick(t, queued, running, ended, removed)
		n, id = it.node, it.id
	}
	i := slices.IndexFunc(n.items, func(it *modelItem) bool { return it.id == id && it.state == queued && id != 0 })
	if got, want := n.s.TryDequeue(id), i >= 0; got != want {
		t.Fatalf("%s: TryDequeue(%d) = %v; want %v", n.name, id, got, want)
	}
	if i >= 0 {
		n.items[i].state = removed
	}
}

// DequeueAll removes a scheduler's queued items, or, as CloseNow, closes
// it too.
func (m *modelMachine) DequeueAll(t *rapid.T) {
	n := m.node(t)
	var got []scheduler.Task
	if rapid.IntRange(0, 3).Draw(t, "close") == 0 {
		got = n.s.CloseNow()
		n.closed = true
	} else {
		got = n.s.DequeueAll()
	}
	var want []scheduler.Task
	for _, it := range n.items {
		if it.state == queued {
			want = append(want, it)
			it.state = removed
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: DequeueAll or CloseNow = %v; want %v", n.name, got, want)
	}
}

// Close closes a scheduler and its subtree to new items, once in four
// draws: rapid draws it most, being the first action by name, and a closed
// tree takes few new items.
func (m *modelMachine) Close(t *rapid.T) {
	if rapid.IntRange(0, 3).Draw(t, "close") != 0 {
		t.Skip("not this time")
	}
	n := m.node(t)
	n.s.Close()
	n.closed = true
}

// Suspend suspends a scheduler, or, for two draws in three on a suspended
// one, Resume undoes a Suspend.
func (m *modelMachine) Suspend(t *rapid.T) {
	n := m.node(t)
	if n.suspends > 0 && rapid.IntRange(0, 2).Draw(t, "resume") > 0 {
		n.s.Resume()
		n.suspends--
		return
	}
	n.s.Suspend()
	n.suspends++
}

// SetLimit changes a scheduler's limit.
func (m *modelMachine) SetLimit(t *rapid.T) {
	n := m.node(t)
	n.limit = rapid.IntRange(1, 4).Draw(t, "limit")
	n.s.SetLimit(n.limit)
}

// Hold holds a scheduler, or releases a hold.
func (m *modelMachine) Hold(t *rapid.T) {
	n := m.node(t)
	if len(n.holds) > 0 && rapid.Bool().Draw(t, "release") {
		n.holds[len(n.holds)-1].Release()
		n.holds = n.holds[:len(n.holds)-1]
		return
	}
	n.holds = append(n.holds, n.s.Hold())
}

// TryRun runs a function on the caller, which holds no slot.
func (m *modelMachine) TryRun(t *rapid.T) {
	n := m.node(t)
	want, sure := m.tryRunAnswer(n, nil)
	ran, problem := false, ""
	got := n.s.TryRun(scheduler.Slot{}, func(sl scheduler.Slot) {
		ran = true
		problem = m.inside(n, nil, sl, false)
	})
	if (sure && got != want) || ran != got {
		t.Fatalf("%s: TryRun = %v (ran %v); want %v", n.name, got, ran, want)
	}
	if problem != "" {
		t.Fatal(problem)
	}
	if got {
		n.completed++
	}
}

// TryRunFrom runs TryRun on any scheduler from a running item, with its
// Slot: in the item's place if the item holds a slot of that scheduler,
// on new slots up to one that it holds otherwise; and, in place, TryRun
// again inside it.
func (m *modelMachine) TryRunFrom(t *rapid.T) {
	it := m.pick(t, running)
	n := m.node(t)
	inPlace := n.below(it.node)
	want, sure := m.tryRunAnswer(n, it.node)
	var got, ran, nested bool
	problem := ""
	it.onItem(func() {
		got = n.s.TryRun(it.slot, func(sl scheduler.Slot) {
			ran = true
			problem = m.inside(n, it.node, sl, inPlace)
			if inPlace {
				nested = n.s.TryRun(sl, func(scheduler.Slot) {})
			}
		})
	})
	if (sure && got != want) || ran != got || nested != (got && inPlace) {
		t.Fatalf("%s: TryRun from an item of %s = %v (ran %v, nested %v); want %v", n.name, it.node.name, got, ran, nested, want)
	}
	if problem != "" {
		t.Fatal(problem)
	}
	if got {
		n.completed++
		if nested {
			n.completed++
		}
	}
}

// inside returns what is wrong, or "", inside a function that TryRun on n
// runs with the Slot sl, for work of an item of holder (nil for none):
// sl must hold a slot of n, of every target above it and of every
// scheduler above holder, and no other; the function counts as running on
// n only on a new slot; and every scheduler's books are right while it
// holds its slots. It runs on the goroutine of the function.
func (m *modelMachine) inside(n, holder *modelNode, sl scheduler.Slot, inPlace bool) string {
	for _, x := range m.nodes {
		want := x.below(n) || (holder != nil && x.below(holder))
		if got := x.s.Holds(sl); got != want {
			return fmt.Sprintf("inside TryRun on %s: %s.Holds = %v; want %v", n.name, x.name, got, want)
		}
		if problem := x.s.Books(); problem != "" {
			return fmt.Sprintf("inside TryRun on %s: %s: %s", n.name, x.name, problem)
		}
	}
	want := n.count(running)
	if !inPlace {
		want++
	}
	if got := n.s.Stats().Running; got != want {
		return fmt.Sprintf("inside TryRun on %s: Running = %d; want %d", n.name, got, want)
	}
	return ""
}

// occupied returns the items running in n's subtree: each holds a slot of
// every scheduler from its own up to the root.
func (m *modelMachine) occupied(n *modelNode) int {
	k := 0
	for _, it := range m.items {
		if it.state == running && n.below(it.node) {
			k++
		}
	}
	return k
}

// runsBarrier reports whether a barrier of n runs.
func runsBarrier(n *modelNode) bool {
	return slices.ContainsFunc(n.items, func(it *modelItem) bool { return it.barrier && it.state == running })
}

// queuesBarrier reports whether a barrier of n is queued.
func queuesBarrier(n *modelNode) bool {
	return slices.ContainsFunc(n.items, func(it *modelItem) bool { return it.barrier && it.state == queued })
}

// blocked reports whether n can start no new work now: it is suspended,
// runs a barrier, is full, or holds queued items, which go first.
func (m *modelMachine) blocked(n *modelNode) bool {
	return n.suspends > 0 || runsBarrier(n) || m.occupied(n) >= n.limit || n.count(queued) > 0
}

// tryRunAnswer returns what TryRun on n must report for work of an item
// of holder (nil for the caller of none), and whether the contract fixes
// it. TryRun takes a new slot of n and of each target above it up to one
// that holder's item holds, and each of those must have one free, with
// nothing queued, and be open. Where those levels are free but a
// scheduler above them is not, a child's turn may wait in their lists
// unseen by the reference, and either answer is right.
func (m *modelMachine) tryRunAnswer(n, holder *modelNode) (want, sure bool) {
	if holder != nil && n.below(holder) {
		return true, true // in the item's place
	}
	if n.isClosed() {
		return false, true
	}
	above := false
	for _, a := range n.chain() {
		if holder != nil && a.below(holder) {
			above = true
		}
		if m.blocked(a) {
			return false, !above // above the path, it may not matter
		}
	}
	return true, true
}

// tryEnqueueAnswer returns what TryEnqueue of an item on n must report:
// true only if the item starts at once, on n and on a turn of each target
// above, each open, with room, and able to start work now.
func (m *modelMachine) tryEnqueueAnswer(n *modelNode, barrier bool) bool {
	if n.isClosed() || n.bound > 0 && n.room() >= n.bound || barrier && m.occupied(n) > 0 {
		return false
	}
	return !slices.ContainsFunc(n.chain(), m.blocked)
}

// held reports whether first, the oldest queued item of n, may be held
// back: n or a target above it is suspended, runs a barrier or is full, a
// target above it has a barrier queued, maybe ahead of n's turns, or first
// is a barrier and others run in n's subtree.
func (m *modelMachine) held(n *modelNode, first *modelItem) bool {
	for _, a := range n.chain() {
		if a.suspends > 0 || runsBarrier(a) || m.occupied(a) >= a.limit || a != n && queuesBarrier(a) {
			return true
		}
	}
	return first.barrier && m.occupied(n) > 0
}

// idle returns 1 if n is idle now (nothing queued, reserved or running in
// it and its subtree, and no Hold on it), 0 if it is not, and -1 if the
// reference cannot tell: a turn that a child asked of its target for items
// since removed stays in the target's list, and keeps the target from
// idleness, until the target runs it, empty; while a scheduler of n's
// subtree is suspended, or a target above n can start nothing, such a turn
// may wait in n's subtree, unseen by the reference.
func (m *modelMachine) idle(n *modelNode) int {
	for _, x := range m.nodes {
		if n.below(x) && x.suspends > 0 || x != n && x.below(n) && (m.blocked(x) || queuesBarrier(x)) {
			return -1
		}
	}
	if len(n.holds) > 0 {
		return 0
	}
	for _, x := range m.nodes {
		if n.below(x) && (len(x.reserved) > 0 || x.count(queued) > 0 || x.count(running) > 0) {
			return 0
		}
	}
	return 1
}

// Check compares the tree with the reference once it is quiet.
func (m *modelMachine) Check(t *rapid.T) {
	synctest.Wait()
	started := map[*modelNode]int{} // items started in the step, by node and the nodes above
	for _, it := range m.items {
		switch runs := it.runs.Load(); {
		case runs > 1:
			t.Fatalf("%s: item %d ran %d times", it.node.name, it.id, runs)
		case it.state == queued && runs == 1:
			it.state = running
			for _, a := range it.node.chain() {
				started[a]++
			}
		case it.state == removed && runs > 0:
			t.Fatalf("%s: item %d ran after it was removed", it.node.name, it.id)
		case it.mustStart && runs == 0:
			t.Fatalf("%s: an item that TryEnqueue queued has not started", it.node.name)
		}
	}
	for _, n := range m.nodes {
		m.checkNode(t, n, started[n])
	}
	for _, it := range m.items {
		if it.state != running && it.state != ended {
			continue
		}
		for _, x := range m.nodes {
			if got, want := x.s.Holds(it.slot), it.state == running && x.below(it.node); got != want {
				t.Fatalf("%s: Holds(Slot of item %d of %s) = %v; want %v", x.name, it.id, it.node.name, got, want)
			}
		}
	}
}

// checkNode checks n, of whose subtree started items started in the step.
func (m *modelMachine) checkNode(t *rapid.T, n *modelNode, started int) {
	occ := m.occupied(n)
	switch {
	case started > 0 && occ > n.limit:
		t.Fatalf("%s: %d items run in its subtree, over its limit %d", n.name, occ, n.limit)
	case occ > max(n.limit, n.occBefore):
		t.Fatalf("%s: %d items run in its subtree, up from %d, over its limit %d", n.name, occ, n.occBefore, n.limit)
	case started > 0 && n.suspends > 0:
		t.Fatalf("%s: %d items started in its subtree while it is suspended", n.name, started)
	case runsBarrier(n) && occ != 1:
		t.Fatalf("%s: a barrier runs beside %d other items of its subtree", n.name, occ-1)
	}
	n.occBefore = occ
	waiting := false
	for _, it := range n.items {
		switch {
		case it.state == queued && !waiting:
			waiting = true
			if !m.held(n, it) {
				t.Fatalf("%s: item %d waits, and nothing holds it back", n.name, it.id)
			}
		case waiting && (it.state == running || it.state == ended):
			t.Fatalf("%s: item %d started before an item queued ahead of it", n.name, it.id)
		}
	}
	st := n.s.Stats()
	if st.Pending != n.count(queued) || st.Running != n.count(running) || st.Completed != n.completed {
		t.Fatalf("%s: Stats = %d pending, %d running, %d completed; want %d, %d, %d",
			n.name, st.Pending, st.Running, st.Completed, n.count(queued), n.count(running), n.completed)
	}
	if problem := n.s.Books(); problem != "" {
		t.Fatalf("%s: %s", n.name, problem)
	}
	if got := n.panics.Load(); got != n.wantPanics {
		t.Fatalf("%s: %d panics reached the handler; want %d", n.name, got, n.wantPanics)
	}
	m.checkHeld(t, n)
	m.checkIdle(t, n)
}

// checkHeld checks Held: true while n or a target above it is suspended or
// runs more than its limit, false while none is suspended and each has a
// slot free. (With a scheduler exactly full, a turn it requested may count
// as a slot, unseen by the reference.)
func (m *modelMachine) checkHeld(t *rapid.T, n *modelNode) {
	must, free := false, true
	for _, a := range n.chain() {
		occ := m.occupied(a)
		must = must || a.suspends > 0 || occ > a.limit
		free = free && a.suspends == 0 && occ < a.limit
	}
	if got := n.s.Held(); (must && !got) || (free && got) {
		t.Fatalf("%s: Held = %v", n.name, got)
	}
}

// checkIdle checks that Wait sees n idle exactly when the reference does,
// and that the idle function ran when a step left n idle.
func (m *modelMachine) checkIdle(t *rapid.T, n *modelNode) {
	idle := m.idle(n)
	if idle >= 0 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got := n.s.Wait(ctx) == nil; got != (idle == 1) {
			t.Fatalf("%s: Wait on a canceled context = %v; want it idle: %v", n.name, got, idle == 1)
		}
		if n.wasIdle == 0 && idle == 1 && n.idles.Load() == 0 {
			t.Fatalf("%s: went idle and its idle function did not run", n.name)
		}
	}
	n.wasIdle = idle
	n.idles.Store(0)
}

// finish lets everything end, and checks that every item ran exactly once
// or was removed, and that the tree holds no slot: the bubble then ends
// with no goroutine.
func (m *modelMachine) finish(t *rapid.T) {
	for _, n := range m.nodes {
		for ; n.suspends > 0; n.suspends-- {
			n.s.Resume()
		}
		for _, r := range n.reserved {
			r.Cancel()
		}
		for _, h := range n.holds {
			h.Release()
		}
	}
	for _, it := range m.items {
		if !testkit.IsClosed(it.release) {
			close(it.release)
		}
	}
	// A tree whose books went wrong may never go idle: an hour of the
	// bubble's time, which passes at once once every goroutine is blocked,
	// says so rather than a deadlock of the bubble.
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	if err := m.nodes[0].s.Wait(ctx); err != nil {
		t.Fatalf("the tree did not go idle once every item was let go: %v", err)
	}
	synctest.Wait()
	for _, it := range m.items {
		if want := map[bool]int32{true: 0, false: 1}[it.state == removed]; it.runs.Load() != want {
			t.Fatalf("%s: item %d ran %d times; want %d", it.node.name, it.id, it.runs.Load(), want)
		}
	}
	for _, n := range m.nodes {
		if problem := n.s.Books(); problem != "" || n.s.Active() != 0 {
			t.Fatalf("%s after the end: %d slots held, %s", n.name, n.s.Active(), problem)
		}
	}
}

// TestSchedulerModel runs random programs on random trees of schedulers,
// checking after every step against the reference: items queued (Enqueue,
// barriers among them, Requeue, TryEnqueue, reservations used or given
// back), ended (return, panic, Goexit) and removed (TryDequeue, DequeueAll,
// CloseNow); Close, Suspend and Resume, SetLimit, Hold and Release; TryRun
// from a caller with no slot, and from running items in their place or on
// new slots of other schedulers of the tree. Each step also checks every
// scheduler's books: the invariants of its core, among them that no queued
// item that may start lacks a slot on its way.
//
// Each round is a rapid.Check of its own, with its own seed (or the one
// given with -rapid.seed): ten rounds, four under the race detector, whose
// bookkeeping makes the bubble's steps slow.
func TestSchedulerModel(t *testing.T) {
	rounds := 10
	if testing.Short() || testkit.RaceEnabled {
		rounds = 4
	}
	synctest.Test(t, func(t *testing.T) {
		for range rounds {
			rapid.Check(testkit.NoDeadline{T: t}, func(t *rapid.T) {
				m := newModelMachine(t)
				defer m.finish(t)
				t.Repeat(rapid.StateMachineActions(m))
			})
			if t.Failed() {
				return
			}
		}
	})
}
