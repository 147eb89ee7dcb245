package scheduler_test

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
	"github.com/taskqueue-go/taskqueue/scheduler"
)

// item is a Task that names itself, for comparing lists.
type item int

func (item) Run(scheduler.Slot) {}

// An entry is an item of the list model: a Task value, a Func or a
// barrier, each with its number.
type entry struct {
	id      scheduler.ID
	n       int
	kind    int // 0: item, 1: Func, 2: barrier of an item
	barrier scheduler.Task
}

// probe is set by the Func items of the list tests when run, so that the
// test can tell which Func it holds: functions cannot be compared.
var probe int

func (e entry) task() scheduler.Task {
	switch e.kind {
	case 1:
		n := e.n
		return scheduler.Func(func() { probe = n })
	case 2:
		return e.barrier
	}
	return item(e.n)
}

// number returns the number of the item t of the list, and its kind.
func number(t scheduler.Task) (n, kind int) {
	switch t := t.(type) {
	case item:
		return int(t), 0
	case scheduler.Func:
		probe = -1
		t()
		return probe, 1
	case nil:
		return -1, -1
	}
	return -2, 2 // a barrier: matched by identity in same
}

// same reports whether t is the entry e.
func same(t scheduler.Task, e entry) bool {
	if e.kind == 2 {
		return t == e.barrier
	}
	n, kind := number(t)
	return n == e.n && kind == e.kind
}

// listMachine checks the list against a plain slice of its live entries,
// oldest first, after every step of a random sequence.
type listMachine struct {
	l     scheduler.List
	model []entry
	next  scheduler.ID
	n     int
}

func (m *listMachine) Push(t *rapid.T) {
	m.n++
	m.next++
	e := entry{id: m.next, n: m.n, kind: rapid.IntRange(0, 2).Draw(t, "kind")}
	if e.kind == 2 {
		e.barrier = scheduler.Barrier(item(e.n))
	}
	// Runs of one kind, as queues see them, and changes of kind.
	reps := rapid.IntRange(1, 40).Draw(t, "reps")
	for r := range reps {
		if r > 0 {
			m.n++
			m.next++
			e.id, e.n = m.next, m.n
			if e.kind == 2 {
				e.barrier = scheduler.Barrier(item(e.n))
			}
		}
		if id := m.l.Push(e.task()); id != e.id {
			t.Fatalf("Push = ID %d; want %d", id, e.id)
		}
		m.model = append(m.model, e)
	}
}

func (m *listMachine) Pop(t *rapid.T) {
	got := m.l.Pop()
	if len(m.model) == 0 {
		if got != nil {
			t.Fatalf("Pop of an empty list = %v", got)
		}
		return
	}
	if !same(got, m.model[0]) {
		t.Fatalf("Pop = %v; want entry %+v", got, m.model[0])
	}
	m.model = m.model[1:]
}

func (m *listMachine) pick(t *rapid.T) scheduler.ID {
	// An ID from the model, or one that was removed or never existed.
	if len(m.model) > 0 && rapid.Bool().Draw(t, "live") {
		return m.model[rapid.IntRange(0, len(m.model)-1).Draw(t, "i")].id
	}
	return scheduler.ID(rapid.Uint64Range(0, uint64(m.next)+2).Draw(t, "id"))
}

func (m *listMachine) Remove(t *rapid.T) {
	id := m.pick(t)
	i := m.compare(t, "Remove", id, m.l.Remove(id))
	if i >= 0 {
		m.model = slices.Delete(m.model, i, i+1)
	}
}

func (m *listMachine) Get(t *rapid.T) {
	id := m.pick(t)
	m.compare(t, "Get", id, m.l.Get(id))
}

// compare fails the test unless got, what call returned for id, is the
// model's entry of that ID, or nil if there is none; it returns the index
// of the entry, or -1.
func (m *listMachine) compare(t *rapid.T, call string, id scheduler.ID, got scheduler.Task) int {
	i := slices.IndexFunc(m.model, func(e entry) bool { return e.id == id })
	switch {
	case i < 0 && got != nil:
		t.Fatalf("%s(%d) of no queued item = %v", call, id, got)
	case i >= 0 && !same(got, m.model[i]):
		t.Fatalf("%s(%d) = %v; want entry %+v", call, id, got, m.model[i])
	}
	return i
}

func (m *listMachine) Drain(t *rapid.T) {
	if rapid.IntRange(0, 9).Draw(t, "rarely") != 0 {
		return
	}
	got := m.l.Drain()
	if len(got) != len(m.model) {
		t.Fatalf("Drain returned %d items; want %d", len(got), len(m.model))
	}
	for i := range got {
		if !same(got[i], m.model[i]) {
			t.Fatalf("Drain()[%d] = %v; want entry %+v", i, got[i], m.model[i])
		}
	}
	m.model = nil
	if rapid.Bool().Draw(t, "shrink") {
		m.l.Shrink()
		if m.l.Cap() != 0 {
			t.Fatalf("Cap = %d after Shrink of an empty list; want 0", m.l.Cap())
		}
	}
}

func (m *listMachine) Check(t *rapid.T) {
	if problem := m.l.Check(); problem != "" {
		t.Fatal(problem)
	}
	if m.l.Len() != len(m.model) {
		t.Fatalf("Len = %d; want %d", m.l.Len(), len(m.model))
	}
	got := m.l.Front()
	if len(m.model) == 0 {
		if got != nil {
			t.Fatalf("Front of an empty list = %v", got)
		}
	} else if !same(got, m.model[0]) {
		t.Fatalf("Front = %v; want entry %+v", got, m.model[0])
	}
	// Memory follows what is queued: every segment but the first holds an
	// item, wherever removals fell.
	if segs := m.l.Segments(); segs > max(1, m.l.Len()) {
		t.Fatalf("%d segments for %d items", segs, m.l.Len())
	}
}

// TestListModel runs random sequences of pushes (runs of items, functions
// and barriers), pops, removals of live and gone IDs, lookups and drains on a
// list, checking it against a slice after every step; rapid shrinks a
// failure to a minimal sequence.
func TestListModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		t.Repeat(rapid.StateMachineActions(&listMachine{}))
	})
}

// TestListReleasesBuffer checks that a list emptied after a burst keeps at
// most one segment, none once shrunk, and that IDs go on.
func TestListReleasesBuffer(t *testing.T) {
	var l scheduler.List
	for i := range 10000 {
		l.Push(item(i))
	}
	if l.Cap() < 10000 {
		t.Fatalf("Cap = %d after 10000 pushes; want at least 10000", l.Cap())
	}
	for l.Pop() != nil {
	}
	if l.Segments() > 1 || l.Cap() > scheduler.MaxSeg {
		t.Errorf("after draining a burst: %d segments of %d slots; want at most one of at most %d", l.Segments(), l.Cap(), scheduler.MaxSeg)
	}
	l.Shrink()
	if l.Cap() != 0 {
		t.Errorf("Cap = %d after Shrink; want 0", l.Cap())
	}
	if id := l.Push(item(0)); id != 10001 {
		t.Errorf("Push after drain = ID %d; want 10001 (IDs are never reused)", id)
	}
}

// TestListRemovalsBehindAStuckHead is the memory failure of a bounded queue
// whose head does not move: a million items queued and removed behind it
// (a tenth of that under the race detector) must not pile up.
func TestListRemovalsBehindAStuckHead(t *testing.T) {
	n := 1_000_000
	if testing.Short() || testkit.RaceEnabled {
		n = 100_000 // a hundred segments of the largest size go by
	}
	var l scheduler.List
	l.Push(item(0)) // the head, which stays
	for range n {
		id := l.Push(scheduler.Func(func() {}))
		if l.Remove(id) == nil {
			t.Fatal("Remove of the newest item = nil")
		}
	}
	if l.Len() != 1 || l.Segments() > 2 || l.Cap() > 2*scheduler.MaxSeg {
		t.Errorf("after %d push-remove pairs behind a head: %d items in %d segments of %d slots; want 1 in at most 2 of at most %d each", n, l.Len(), l.Segments(), l.Cap(), scheduler.MaxSeg)
	}
}

// TestListFuncsCostAWord checks that a backlog of functions costs a word an
// item, by the list's own measure: a million Funcs fill segments of func
// values, not of interfaces.
func TestListFuncsCostAWord(t *testing.T) {
	var l scheduler.List
	for range 1_000_000 {
		l.Push(scheduler.Func(tinyFunc))
	}
	if got := l.Bytes(); got > 1_000_000*81/10 {
		t.Errorf("a million Funcs hold %d bytes of slots; want at most 8.1 per item", got)
	}
}

func tinyFunc() {}
