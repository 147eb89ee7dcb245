package benchmarks

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkQueueFloor runs BenchmarkQueue's tiny tasks through two designs
// that keep none of the queue's promises but the two that shape its cost
// (a submission never blocks, and an idle pool holds no goroutine), beside
// the channel baseline and taskqueue, in the same run:
//
//	floor-mutex    a ring of functions under one mutex, workers started on
//	               demand that exit when it is empty: the cheapest form of
//	               the queue's design, with no IDs, removal, close, stats,
//	               recover or trees
//	floor-tickets  the same with no lock for submitters: each takes a ticket
//	               with one atomic add and writes its slot, and the workers
//	               read the slots in ticket order under a mutex
//
// It shows what the design leaves to win: how far taskqueue is from the
// cheapest mutex design, and how far a lock-free intake could go against a
// channel whose submitters block when its buffer is full, on the same
// machine.
func BenchmarkQueueFloor(b *testing.B) {
	systems := []System{Systems[0], Systems[1], {"floor-mutex", true, newFloorMutex}, {"floor-tickets", true, newFloorTickets}}
	f := func() { done.Add(1) }
	for _, mode := range []string{"drain", "backlog"} {
		for _, limit := range []int{1, runtime.GOMAXPROCS(0)} {
			for _, subs := range []int{1, 8, 64} {
				for _, sys := range systems {
					every := drainEvery
					if mode == "backlog" {
						every = 0
					}
					b.Run(fmt.Sprintf("mode=%s/limit=%d/subs=%d/impl=%s", mode, limit, subs, sys.Name), func(b *testing.B) {
						benchQueue(b, sys, limit, subs, every, f)
					})
				}
			}
		}
	}
}

// TestFloorsRunEveryTask checks the floors against lost tasks: every
// submission from many goroutines runs once, at limits 1 and 4, through
// bursts that let the workers exit between them.
func TestFloorsRunEveryTask(t *testing.T) {
	for _, sys := range []System{{"floor-mutex", true, newFloorMutex}, {"floor-tickets", true, newFloorTickets}} {
		for _, limit := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/limit=%d", sys.Name, limit), func(t *testing.T) {
				var ran atomic.Int64
				p := sys.New(limit, func() { ran.Add(1) })
				const subs, each = 16, 5000
				var wg sync.WaitGroup
				for range subs {
					wg.Go(func() {
						for i := range each {
							p.Go()
							if i%512 == 0 {
								runtime.Gosched()
							}
						}
					})
				}
				wg.Wait()
				p.Close()
				if got := ran.Load(); got != subs*each {
					t.Fatalf("%d tasks ran; want %d", got, subs*each)
				}
			})
		}
	}
}

// floorMutex is the floor-mutex design: a growing ring under mu.
type floorMutex struct {
	mu     sync.Mutex
	ring   []func()
	head   int // index of the oldest function
	n      int // functions queued
	active int // workers
	limit  int
	idle   *sync.Cond // signaled when n and active are both 0
}

func newFloorMutex(limit int, task func()) Pool {
	p := &floorMutex{limit: limit, ring: make([]func(), 8)}
	p.idle = sync.NewCond(&p.mu)
	return Pool{Go: func() { p.submit(task) }, Wait: waitWith(p.submit, task), Submit: p.submit, Close: p.close}
}

func (p *floorMutex) submit(f func()) {
	p.mu.Lock()
	if p.n == len(p.ring) {
		ring := make([]func(), 2*len(p.ring))
		k := copy(ring, p.ring[p.head:])
		copy(ring[k:], p.ring[:p.head])
		p.ring, p.head = ring, 0
	}
	p.ring[(p.head+p.n)%len(p.ring)] = f
	p.n++
	spawn := p.active < p.limit
	if spawn {
		p.active++
	}
	p.mu.Unlock()
	if spawn {
		go p.work()
	}
}

func (p *floorMutex) work() {
	p.mu.Lock()
	for p.n > 0 {
		f := p.ring[p.head]
		p.ring[p.head] = nil
		p.head = (p.head + 1) % len(p.ring)
		p.n--
		p.mu.Unlock()
		f()
		p.mu.Lock()
	}
	p.active--
	if p.active == 0 {
		p.idle.Broadcast()
	}
	p.mu.Unlock()
}

func (p *floorMutex) close() {
	p.mu.Lock()
	for p.n > 0 || p.active > 0 {
		p.idle.Wait()
	}
	p.mu.Unlock()
}

// floorSeg is how many slots a segment of floorTickets holds.
const floorSeg = 1024

// floorTickets is the floor-tickets design. A submission takes ticket t from
// tail and writes slot t, which lives in the segment whose base is t rounded
// down to floorSeg; segments are linked as submitters need them and left to
// the garbage collector once the workers have passed them. The workers take
// slots in ticket order under mu, stopping at one whose submitter has not
// written it yet.
//
// No submission is lost: a submitter writes its slot and then loads active;
// a worker that finds no written slot at head decrements active and then
// looks at head once more. Whichever of the two comes second sees the
// other's write (Go's atomics are sequentially consistent), so either the
// submitter starts a worker, or the leaving worker takes the slot.
type floorTickets struct {
	tail   atomic.Uint64             // tickets taken
	last   atomic.Pointer[ticketSeg] // a segment at or before every ticket yet to be taken
	active atomic.Int32              // workers; changed under mu
	limit  int32

	mu      sync.Mutex
	head    uint64 // the next ticket to run
	headSeg *ticketSeg
	idle    *sync.Cond // signaled when a worker leaves with nothing queued
}

type ticketSeg struct {
	base  uint64
	next  atomic.Pointer[ticketSeg]
	slots [floorSeg]ticketSlot
}

type ticketSlot struct {
	written atomic.Bool
	f       func()
}

func newFloorTickets(limit int, task func()) Pool {
	p := &floorTickets{limit: int32(limit)}
	p.headSeg = &ticketSeg{}
	p.last.Store(p.headSeg)
	p.idle = sync.NewCond(&p.mu)
	return Pool{Go: func() { p.submit(task) }, Wait: waitWith(p.submit, task), Submit: p.submit, Close: p.close}
}

func (p *floorTickets) submit(f func()) {
	s := p.last.Load() // loaded before the ticket, so that s.base <= t
	t := p.tail.Add(1) - 1
	for t >= s.base+floorSeg {
		n := s.next.Load()
		if n == nil {
			n = &ticketSeg{base: s.base + floorSeg}
			if !s.next.CompareAndSwap(nil, n) {
				n = s.next.Load()
			}
		}
		s = n
	}
	for h := p.last.Load(); h.base < s.base && !p.last.CompareAndSwap(h, s); h = p.last.Load() {
	}
	sl := &s.slots[t-s.base]
	sl.f = f
	sl.written.Store(true)
	if p.active.Load() < p.limit {
		p.mu.Lock()
		p.spawnLocked()
		p.mu.Unlock()
	}
}

// slotLocked returns the slot of head, or nil if its segment is not linked
// yet.
func (p *floorTickets) slotLocked() *ticketSlot {
	if p.head == p.headSeg.base+floorSeg {
		n := p.headSeg.next.Load()
		if n == nil {
			return nil
		}
		p.headSeg = n
	}
	return &p.headSeg.slots[p.head-p.headSeg.base]
}

// readyLocked reports whether the slot of head is written.
func (p *floorTickets) readyLocked() bool {
	sl := p.slotLocked()
	return sl != nil && sl.written.Load()
}

func (p *floorTickets) spawnLocked() {
	if a := p.active.Load(); a < p.limit && p.readyLocked() {
		p.active.Store(a + 1)
		go p.work()
	}
}

func (p *floorTickets) work() {
	p.mu.Lock()
	for {
		if !p.readyLocked() {
			p.active.Add(-1)
			if p.readyLocked() { // a submitter that saw this worker still counted
				p.active.Add(1)
				continue
			}
			p.idle.Broadcast()
			p.mu.Unlock()
			return
		}
		sl := p.slotLocked()
		f := sl.f
		sl.f = nil
		p.head++
		p.mu.Unlock()
		f()
		p.mu.Lock()
	}
}

func (p *floorTickets) close() {
	p.mu.Lock()
	for p.head < p.tail.Load() || p.active.Load() > 0 {
		p.idle.Wait()
	}
	p.mu.Unlock()
}
