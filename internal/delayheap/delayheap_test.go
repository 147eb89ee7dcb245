package delayheap_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/delayheap"
)

// refEntry is an entry of the reference: a slice kept sorted by due time and
// sequence number.
type refEntry struct {
	due int64
	seq uint64
	v   int
}

func compareRef(a, b refEntry) int {
	if c := cmp.Compare(a.due, b.due); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// checkHeap runs the operations encoded in ops on the 4-ary heap and on a
// sorted slice, and fails at the first difference.
func checkHeap(t *testing.T, ops []byte) {
	var h delayheap.Heap[int]
	var ref []refEntry
	var seq uint64
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i]%4, int64(ops[i+1])
		switch op {
		case 0, 1: // push; small due times make many ties
			seq++
			h.Push(arg%16, seq, int(seq))
			ref = append(ref, refEntry{arg % 16, seq, int(seq)})
			slices.SortFunc(ref, compareRef)
		case 2: // pop
			if len(ref) == 0 {
				continue
			}
			if got := h.Pop(); got != ref[0].v {
				t.Fatalf("op %d: Pop = %d; want %d", i, got, ref[0].v)
			}
			ref = ref[1:]
		case 3: // filter out the items divisible by a small number
			d := int(arg%5) + 2
			h.Filter(func(e *delayheap.Entry[int]) bool { return e.V%d != 0 })
			ref = slices.DeleteFunc(ref, func(e refEntry) bool { return e.v%d == 0 })
		}
		if h.Len() != len(ref) {
			t.Fatalf("op %d: Len = %d; want %d", i, h.Len(), len(ref))
		}
		if len(ref) > 0 {
			top := h.Top()
			due, s, v := top.Due, top.Seq, top.V
			if due != ref[0].due || s != ref[0].seq || v != ref[0].v {
				t.Fatalf("op %d: Top = (%d, %d, %d); want %v", i, due, s, v, ref[0])
			}
		}
	}
}

func FuzzDelayHeap(f *testing.F) {
	f.Add([]byte{0, 5, 0, 3, 0, 5, 2, 0, 3, 1, 4, 2, 2, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		checkHeap(t, ops[:min(len(ops), 2000)])
	})
}

func TestDelayHeapRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 100 {
		ops := make([]byte, 2000)
		for i := range ops {
			ops[i] = byte(r.UintN(256))
		}
		checkHeap(t, ops)
	}
}
