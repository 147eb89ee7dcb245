package delayheap_test

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/internal/delayheap"
)

const tick = 1 << 20 // the wheel's slot width, in ns

// wheelModel is the state machine of TestWheelModel: a Wheel of timer ids
// as the loom uses it (an entry is live while its sequence number is its
// timer's), against a sorted slice of every entry, stale ones included.
type wheelModel struct {
	w    delayheap.Wheel[int]
	ref  []refEntry     // every entry of w, sorted
	seqs map[int]uint64 // a timer's live entry; absent when it waits not
	seq  uint64
	now  int64
	cur  int64 // the first tick the wheel has not collected
	ids  int
}

func (m *wheelModel) live(e *delayheap.Entry[int]) bool { return m.seqs[e.V] == e.Seq }

func (m *wheelModel) refLive(e refEntry) bool { return m.seqs[e.v] == e.seq }

// due draws a due time around now: in the current tick, in the slots, past
// them, or (rarely, as a clock read late would give) in the past.
func (m *wheelModel) due(t *rapid.T) int64 {
	scale := rapid.SampledFrom([]int64{tick / 4, tick, 64 * tick, 1200 * tick}).Draw(t, "scale")
	return m.now + rapid.Int64Range(-scale/8, scale).Draw(t, "offset")
}

func (m *wheelModel) push(id int, due int64) {
	m.seq++
	m.seqs[id] = m.seq
	m.w.Push(due, m.seq, id)
	m.ref = append(m.ref, refEntry{due, m.seq, id})
	slices.SortFunc(m.ref, compareRef)
}

func (m *wheelModel) Post(t *rapid.T) {
	due := m.due(t)
	if want := m.refBefore(due, m.seq+1); m.w.Before(due, m.seq+1) != want {
		t.Fatalf("Before(%d, %d) = %v; want %v", due, m.seq+1, !want, want)
	}
	m.ids++
	m.push(m.ids, due)
}

func (m *wheelModel) refBefore(due int64, seq uint64) bool {
	return len(m.ref) == 0 || compareRef(refEntry{due: due, seq: seq}, m.ref[0]) < 0
}

func (m *wheelModel) Stop(t *rapid.T) {
	if m.ids == 0 {
		t.Skip("no timer")
	}
	delete(m.seqs, rapid.IntRange(1, m.ids).Draw(t, "id"))
}

func (m *wheelModel) Reset(t *rapid.T) {
	if m.ids == 0 {
		t.Skip("no timer")
	}
	m.push(rapid.IntRange(1, m.ids).Draw(t, "id"), m.due(t))
}

// Frame moves the clock and pops what is due, as a frame does, sweeping
// stale entries ahead now and then, and checks each entry against the
// model's.
func (m *wheelModel) Frame(t *rapid.T) {
	m.now += rapid.SampledFrom([]int64{0, 1, tick / 3, tick, 16 * tick, 700 * tick}).Draw(t, "dt")
	budget := rapid.IntRange(1, 50).Draw(t, "budget")
	m.w.Collect(m.now)
	m.cur = max(m.cur, m.now>>20+1)
	var ran []int
	for i := 0; len(ran) < budget; i++ {
		if i%4 == 0 {
			n := rapid.IntRange(0, 8).Draw(t, "sweep")
			dropped := m.w.DropStale(n, m.live)
			// The model's run is its entries of ticks already collected.
			want := 0
			for j := 0; j < len(m.ref) && j+want < n && m.ref[j].due>>20 < m.cur; {
				if m.refLive(m.ref[j]) {
					j++
					continue
				}
				m.ref = slices.Delete(m.ref, j, j+1)
				want++
			}
			if dropped != want {
				t.Fatalf("DropStale(%d) = %d; want %d", n, dropped, want)
			}
			m.checkNext(t, rapid.IntRange(0, 8).Draw(t, "next"))
		}
		e := m.w.Front()
		if e == nil || e.Due > m.now {
			if len(m.ref) > 0 && m.ref[0].due <= m.now {
				t.Fatalf("frame at %d: Front() = %v; want %+v", m.now, e, m.ref[0])
			}
			break
		}
		if len(m.ref) == 0 || e.Due != m.ref[0].due || e.Seq != m.ref[0].seq {
			t.Fatalf("frame at %d: Front() = %+v; want %v", m.now, *e, m.ref)
		}
		m.ref = m.ref[1:]
		live := m.live(e)
		if id := m.w.Pop(); live {
			delete(m.seqs, id)
			ran = append(ran, id)
		}
	}
}

// checkNext checks that Next(n) returns the first n entries of the model's
// run: its entries of ticks already collected.
func (m *wheelModel) checkNext(t *rapid.T, n int) {
	var want []refEntry
	for _, r := range m.ref {
		if len(want) == n || r.due>>20 >= m.cur {
			break
		}
		want = append(want, r)
	}
	got := m.w.Next(n)
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Due == want[i].due && got[i].Seq == want[i].seq && got[i].V == want[i].v
	}
	if !ok {
		t.Fatalf("Next(%d) = %+v; want %+v", n, got, want)
	}
}

// Earliest is what Idle asks: the earliest live entry. On the way, the
// wheel drops the stale entries before it in the collected run, every stale
// entry of the slots it looks into (by tick, up to the slot of the one it
// finds), and the stale entries above it in the far heap.
func (m *wheelModel) Earliest(t *rapid.T) {
	e, dropped := m.w.Earliest(m.live)
	var want *refEntry
	keep := make([]bool, len(m.ref)) // every entry before the first live one goes
	for i, r := range m.ref {
		if want == nil && m.refLive(r) {
			want = &m.ref[i]
		}
		if want != nil {
			tk := want.due >> 20
			inSlot := tk >= m.cur && tk < m.cur+512
			keep[i] = m.refLive(r) || !inSlot || r.due>>20 != tk
		}
	}
	switch {
	case want == nil && e != nil:
		t.Fatalf("Earliest() = %+v; want none", *e)
	case want != nil && (e == nil || e.Due != want.due || e.Seq != want.seq):
		t.Fatalf("Earliest() = %v; want %+v", e, *want)
	}
	var kept []refEntry
	for i, r := range m.ref {
		if keep[i] {
			kept = append(kept, r)
		}
	}
	if got, want := dropped, len(m.ref)-len(kept); got != want {
		t.Fatalf("Earliest() dropped %d entries; want %d", got, want)
	}
	m.ref = kept
}

func (m *wheelModel) Filter(t *rapid.T) {
	m.w.Filter(m.live)
	m.ref = slices.DeleteFunc(m.ref, func(r refEntry) bool { return !m.refLive(r) })
}

func (m *wheelModel) Check(t *rapid.T) {
	if n := m.w.Len(); n != len(m.ref) {
		t.Fatalf("Len() = %d; want %d", n, len(m.ref))
	}
}

// TestWheelModel checks the Wheel against a sorted slice: posts, stops and
// resets (which leave stale entries), frames that pop what is due in due
// order with a budget, reading ahead of the run (DropStale, Next), the
// earliest live entry, Before, and Filter.
func TestWheelModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &wheelModel{seqs: map[int]uint64{}, now: rapid.Int64Range(0, 1<<40).Draw(t, "start")}
		t.Repeat(rapid.StateMachineActions(m))
	})
}

// TestWheelDrain checks that Drain returns every entry and empties the
// wheel, which then works on.
func TestWheelDrain(t *testing.T) {
	var w delayheap.Wheel[int]
	for i := range 2000 {
		w.Push(int64(i)*tick/2, uint64(i+1), i) // ready, slots and far
		if i == 600 {
			w.Collect(int64(i) * tick / 4)
		}
	}
	all := w.Drain()
	if len(all) != 2000 || w.Len() != 0 {
		t.Fatalf("Drain() returned %d entries, leaving %d; want 2000, leaving 0", len(all), w.Len())
	}
	ids := make([]int, len(all))
	for i, e := range all {
		ids[i] = e.V
	}
	slices.Sort(ids)
	for i, id := range ids {
		if id != i {
			t.Fatalf("Drain() lost entry %d", i)
		}
	}
	w.Push(3*tick, 1, 7)
	w.Collect(4 * tick)
	if e := w.Front(); e == nil || e.V != 7 {
		t.Fatalf("Front() after Drain, Push, Collect = %v; want entry 7", e)
	}
}
