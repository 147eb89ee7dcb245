package scheduler

import (
	"runtime"

	"github.com/taskqueue-go/taskqueue/internal/goid"
)

// The states of Scheduler.spin.
const (
	spinIdle    = iota // no worker lingers
	spinning           // the last worker lingers, holding no slot
	spinClaimed        // a push handed the lingering worker a slot
)

// lingerSpins is how many times the last worker of a Scheduler yields the
// processor, looking for new work, before it exits: a few microseconds, about
// the time a submitter that waited for the previous item takes to queue the
// next. A submitter that comes within it wakes the worker instead of starting
// a goroutine, which costs several times more (see BenchmarkTrickle). The
// spin counts yields, not time, so that it ends as quickly under
// testing/synctest's fake clock, where time does not pass while a goroutine
// runs.
const lingerSpins = 64

// spawnLocked starts the workers the list needs: one for each item that may
// start now and that no worker will take, within the limit. Workers between
// two items count as takers, since each is about to take one.
func (s *Scheduler) spawnLocked() {
	if s.active >= s.limit {
		return
	}
	want := s.list.live
	if s.exclusive {
		want = 0
	} else if _, isBarrier, _ := s.list.front(); isBarrier {
		want = 0
		if s.running == 0 {
			want = 1 // the barrier may start; it runs alone
		}
	}
	want -= s.active - s.running
	for ; want > 0 && s.active < s.limit; want-- {
		s.active++
		if s.spin.Load() == spinning {
			s.spin.Store(spinClaimed) // the lingering worker takes this slot
			continue
		}
		go s.work()
	}
}

// work is the body of a worker goroutine. It holds one slot, runs items until
// the list has none it may start, lingers briefly, then gives the slot back
// and returns.
func (s *Scheduler) work() {
	g := goid.Current()
	s.mu.Lock()
	tok := s.books.take(g)
	for {
		t, ok := s.takeLocked()
		if !ok {
			s.books.give(tok, g)
			s.active--
			if !s.lingerLocked() {
				s.mu.Unlock()
				return
			}
			tok = s.books.take(g) // claimed: a push counted this worker in active
			continue
		}
		s.mu.Unlock()
		s.room.release(1)
		s.run(t, tok, g)
		s.mu.Lock()
		s.finishLocked()
	}
}

// takeLocked pops the next item that may start now and counts it as running.
func (s *Scheduler) takeLocked() (Task, bool) {
	if s.exclusive {
		return nil, false
	}
	t, isBarrier, ok := s.list.front()
	if !ok {
		return nil, false
	}
	if isBarrier {
		if s.running > 0 {
			return nil, false // the last item to finish will start the barrier
		}
		s.exclusive = true
	}
	s.list.pop()
	s.running++
	return t, true
}

// finishLocked records the end of an item that ran on a slot.
func (s *Scheduler) finishLocked() {
	s.running--
	s.completed++
	if s.exclusive {
		// The barrier is done: the items behind it may start, and the
		// workers that left while it waited must be replaced.
		s.exclusive = false
		s.spawnLocked()
	}
}

// lingerLocked keeps the calling worker, which holds no slot any more, alive
// for a few yields in case new work comes, if it is the last worker. It
// returns with s.mu held, reporting whether a push claimed the worker, in
// which case the push has counted it in active and it goes on as a worker.
func (s *Scheduler) lingerLocked() bool {
	if s.active > 0 || s.spin.Load() != spinIdle || s.closed {
		s.idleLocked()
		return false
	}
	s.spin.Store(spinning)
	s.idleLocked() // wakes Wait; keeps the list's segment for the next item
	s.mu.Unlock()
	for i := 0; i < lingerSpins && s.spin.Load() == spinning; i++ {
		runtime.Gosched()
	}
	s.mu.Lock()
	claimed := s.spin.Load() == spinClaimed
	s.spin.Store(spinIdle)
	if !claimed {
		s.idleLocked()
	}
	return claimed
}

// run runs t on the calling worker, which holds the slot tok. A panic in t
// goes to the panic handler and the worker carries on. If t calls
// runtime.Goexit the worker cannot carry on: it gives its slot back, with the
// accounting of t, and a new worker takes over if there is work.
func (s *Scheduler) run(t Task, tok token, g uint64) {
	normal := false
	defer func() {
		if normal {
			return
		}
		if v := recover(); v != nil {
			s.onPanic(NewPanicError(v))
			return
		}
		s.mu.Lock()
		s.books.give(tok, g)
		s.active--
		s.finishLocked()
		s.spawnLocked()
		s.idleLocked()
		s.mu.Unlock()
	}()
	t.Run()
	normal = true
}
