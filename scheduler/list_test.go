package scheduler_test

import (
	"math/rand/v2"
	"testing"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// item is a Task that names itself, for comparing lists.
type item int

func (item) Run() {}

// kinded are items of ten more types, so that the list meets more types
// than a segment's table holds.
type kinded[T any] int

func (kinded[T]) Run() {}

func anItem(n, kind int) scheduler.Task {
	switch kind % 11 {
	case 0:
		return kinded[[0]byte](n)
	case 1:
		return kinded[[1]byte](n)
	case 2:
		return kinded[[2]byte](n)
	case 3:
		return kinded[[3]byte](n)
	case 4:
		return kinded[[4]byte](n)
	case 5:
		return kinded[[5]byte](n)
	case 6:
		return kinded[[6]byte](n)
	case 7:
		return kinded[[7]byte](n)
	case 8:
		return kinded[[8]byte](n)
	case 9:
		return kinded[[9]byte](n)
	}
	return item(n)
}

// refList is the trivially correct reference for the list: a slice of the
// live items with their IDs, oldest first.
type refList struct {
	ids      []scheduler.ID
	items    []scheduler.Task
	barriers []bool
	next     scheduler.ID
}

func (r *refList) push(t scheduler.Task, barrier bool) scheduler.ID {
	r.next++
	r.ids = append(r.ids, r.next)
	r.items = append(r.items, t)
	r.barriers = append(r.barriers, barrier)
	return r.next
}

func (r *refList) find(id scheduler.ID) int {
	for i, x := range r.ids {
		if x == id {
			return i
		}
	}
	return -1
}

func (r *refList) remove(i int) scheduler.Task {
	t := r.items[i]
	r.ids = append(r.ids[:i], r.ids[i+1:]...)
	r.items = append(r.items[:i], r.items[i+1:]...)
	r.barriers = append(r.barriers[:i], r.barriers[i+1:]...)
	return t
}

// checkList runs the operations encoded in ops on a List and on the
// reference, and fails at the first difference.
func checkList(t *testing.T, ops []byte) {
	t.Helper()
	var l scheduler.List
	var ref refList
	n := 0
	for i := 0; i < len(ops); i++ {
		op := ops[i] % 6
		arg := 0
		if i+1 < len(ops) {
			arg = int(ops[i+1])
		}
		switch op {
		case 0, 1: // push, twice as likely as the others so lists grow
			n++
			it, barrier := anItem(n, arg), arg%13 == 0
			var id scheduler.ID
			if barrier {
				id = l.PushBarrier(it)
			} else {
				id = l.Push(it)
			}
			if want := ref.push(it, barrier); id != want {
				t.Fatalf("op %d: Push = %d; want %d", i, id, want)
			}
		case 2: // pop
			got := l.Pop()
			var want scheduler.Task
			if len(ref.items) > 0 {
				want = ref.remove(0)
			}
			if got != want {
				t.Fatalf("op %d: Pop = %v; want %v", i, got, want)
			}
		case 3: // remove an ID counted back from the newest, possibly a gone one
			i++
			id := ref.next - scheduler.ID(arg%8)
			got := l.Remove(id)
			var want scheduler.Task
			if j := ref.find(id); j >= 0 {
				want = ref.remove(j)
			}
			if got != want {
				t.Fatalf("op %d: Remove(%d) = %v; want %v", i, id, got, want)
			}
		case 4: // get an ID counted up from the oldest, possibly past the end
			i++
			var id scheduler.ID = 1
			if len(ref.ids) > 0 {
				id = ref.ids[0] + scheduler.ID(arg%8)
			}
			got := l.Get(id)
			var want scheduler.Task
			if j := ref.find(id); j >= 0 {
				want = ref.items[j]
			}
			if got != want {
				t.Fatalf("op %d: Get(%d) = %v; want %v", i, id, got, want)
			}
		case 5: // drain, rarely
			if arg%16 != 0 {
				continue
			}
			i++
			got := l.Drain()
			if len(got) != len(ref.items) {
				t.Fatalf("op %d: Drain returned %d items; want %d", i, len(got), len(ref.items))
			}
			for k := range got {
				if got[k] != ref.items[k] {
					t.Fatalf("op %d: Drain()[%d] = %v; want %v", i, k, got[k], ref.items[k])
				}
			}
			ref.ids, ref.items, ref.barriers = nil, nil, nil
		}
		if l.Len() != len(ref.items) {
			t.Fatalf("op %d: Len = %d; want %d", i, l.Len(), len(ref.items))
		}
		var want scheduler.Task
		wantBarrier := false
		if len(ref.items) > 0 {
			want, wantBarrier = ref.items[0], ref.barriers[0]
		}
		if got := l.Front(); got != want {
			t.Fatalf("op %d: Front = %v; want %v", i, got, want)
		}
		if got := l.FrontIsBarrier(); got != wantBarrier {
			t.Fatalf("op %d: FrontIsBarrier = %v; want %v", i, got, wantBarrier)
		}
		// Memory follows what is queued: every segment but the first holds
		// an item, wherever removals fell.
		if segs := l.Segments(); segs > max(1, l.Len()) {
			t.Fatalf("op %d: %d segments for %d items", i, segs, l.Len())
		}
	}
}

func FuzzList(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 3, 1, 4, 0})
	f.Add([]byte{0, 1, 0, 1, 3, 0, 3, 1, 2, 2, 2, 5, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		// The reference is quadratic; long inputs add time, not coverage.
		checkList(t, ops[:min(len(ops), 1024)])
	})
}

// TestListRandom runs long random operation sequences against the reference,
// so that plain go test covers what the fuzzer explores.
func TestListRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		ops := make([]byte, 2000)
		for i := range ops {
			ops[i] = byte(r.UintN(256))
		}
		checkList(t, ops)
	}
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
// must not pile up.
func TestListRemovalsBehindAStuckHead(t *testing.T) {
	var l scheduler.List
	l.Push(item(0)) // the head, which stays
	for i := range 1_000_000 {
		id := l.Push(item(i))
		if l.Remove(id) == nil {
			t.Fatal("Remove of the newest item = nil")
		}
	}
	if l.Len() != 1 || l.Segments() > 2 || l.Cap() > 2*scheduler.MaxSeg {
		t.Errorf("after 1M push-remove pairs behind a head: %d items in %d segments of %d slots; want 1 in at most 2 of at most %d each", l.Len(), l.Segments(), l.Cap(), scheduler.MaxSeg)
	}
}
