package scheduler

import "github.com/taskqueue-go/taskqueue/internal/goid"

// List exposes the list type to the model tests.
type List struct{ l list }

func (l *List) Push(t Task) ID { return l.l.push(t, false) }

// PushBarrier pushes t marked as a barrier.
func (l *List) PushBarrier(t Task) ID { return l.l.push(t, true) }

func (l *List) Pop() Task {
	if l.l.live == 0 {
		return nil
	}
	return l.l.pop()
}

func (l *List) Front() Task {
	t, _, _ := l.l.front()
	return t
}

// FrontIsBarrier reports whether the oldest item is marked as a barrier.
func (l *List) FrontIsBarrier() bool {
	_, b, _ := l.l.front()
	return b
}

func (l *List) Get(id ID) Task {
	if seg, i := l.l.find(id); seg != nil {
		return seg.item(i)
	}
	return nil
}

func (l *List) Remove(id ID) Task {
	t, _, _ := l.l.remove(id)
	return t
}

func (l *List) Drain() []Task {
	ts, _ := l.l.drain()
	return ts
}

func (l *List) Len() int { return l.l.live }
func (l *List) Shrink()  { l.l.shrink() }

// Cap returns the number of item slots the list's segments hold.
func (l *List) Cap() int {
	n := 0
	for _, seg := range l.l.segs {
		n += len(seg.data)
	}
	return n
}

// Segments returns the number of segments the list holds.
func (l *List) Segments() int { return len(l.l.segs) }

// Snapshot returns the queued items and the slots in use, read together.
func (s *Scheduler) Snapshot() (pending, active int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list.live, int(s.active)
}

// Active returns the number of slots in use: workers plus TryRun callers.
func (s *Scheduler) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.active)
}

// Books checks the slot books of s and returns the goroutine IDs of the
// holders, or a description of what is wrong with them: a record in use
// must be counted in active, and the same goroutine must not hold two.
func (s *Scheduler) Books() (holders []uint64, problem string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[uint64]bool{}
	for _, r := range s.books.recs {
		if r.g == 0 {
			continue
		}
		if seen[r.g] {
			return nil, "a goroutine holds two slots"
		}
		seen[r.g] = true
		holders = append(holders, r.g)
	}
	if len(holders) > int(s.active+s.lent) {
		return nil, "more slot records in use than slots active"
	}
	if s.active > s.limit {
		return nil, "more slots active than the limit"
	}
	return holders, ""
}

// GoroutineID returns the calling goroutine's ID, as the books record it.
func GoroutineID() uint64 { return goid.Current() }

// MaxSeg is the most items a segment of the list holds.
const MaxSeg = maxSeg
