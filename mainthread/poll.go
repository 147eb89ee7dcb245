package mainthread

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Polling, rather than parking, pays only while both sides run at once: the
// main thread polling for the next call, and the caller, on a processor of
// its own, polling for its outcome. It costs when they do not: a goroutine
// that polls holds its processor, and one that waits for it (the main
// goroutine queued behind a polling caller, a caller queued behind the
// polling main thread) waits as long; and a machine whose CPUs other
// programs keep busy runs the two in turns, each poll burning the other's
// time. So Run's loop polls only while polling has paid lately, and its
// callers poll only while it does.

var (
	// spinSlots is how many callers may poll for their outcome at once:
	// GOMAXPROCS-1 while Run's loop polls after its frames, else 0, so that
	// callers that poll leave a processor to the main thread. Set by Run's
	// loop; spinners counts the callers that poll.
	spinSlots, spinners atomic.Int32
	// loopSleeps counts the times Run's loop went to sleep, for the
	// benchmarks.
	loopSleeps atomic.Int64
)

// A poller decides, after each frame of Run's loop, whether the loop polls
// for work before it sleeps, and for how long. It polls for up to max while
// that pays: a poll that sees work restores the full budget; a frame that
// rules polling out, or a poll in vain, halves it; below max/16 polling
// stops (callers then park too), and is tried again after a number of
// frames that doubles with each failed try, up to maxWait. A renderer whose
// calls come back to back keeps polling; a loop whose polls find nothing,
// idle or starved of CPU time, soon stops, and tries again rarely.
//
// Owned by the main goroutine.
type poller struct {
	max    time.Duration // WithSpin's
	slots  int32         // GOMAXPROCS-1, or 0 when nobody may poll
	budget time.Duration // the next poll's; 0 while polling is off
	wait   int           // frames polling stays off after its next failure
	off    int           // frames that sleep at once before polling is tried again
	spin   *atomic.Int32 // where it publishes how many callers may poll: spinSlots
}

// maxWait is the most frames polling stays off.
const maxWait = 1024

func newPoller(max time.Duration, spin *atomic.Int32) *poller {
	p := &poller{max: max, budget: max, wait: 1, spin: spin}
	p.procs()
	return p
}

// procs reads GOMAXPROCS and the number of CPUs: with one processor of
// either, the other side could not run until a poll ended, and nobody
// polls. It publishes spinSlots.
func (p *poller) procs() {
	p.slots = 0
	if p.max > 0 && runtime.NumCPU() > 1 {
		p.slots = int32(runtime.GOMAXPROCS(0) - 1)
	}
	p.publish()
}

func (p *poller) publish() {
	if p.budget > 0 {
		p.spin.Store(p.slots)
	} else {
		p.spin.Store(0)
	}
}

// stop lets callers poll no more, once Run returns.
func (p *poller) stop() { p.spin.Store(0) }

// next returns how long the loop polls after a frame whose calls found
// calls (see frameCalls), or 0 if it sleeps at once. A frame that woke a
// caller, or delivered to one that was not polling, rules polling out: the
// caller waits for a processor, perhaps the main thread's, which a poll
// would hold; and polling did not pay, since its caller had to wait.
func (p *poller) next(calls uint32) time.Duration {
	if p.slots <= 0 {
		return 0
	}
	if p.budget == 0 {
		if p.off > 0 {
			p.off--
			return 0
		}
		p.budget = p.max // try again
		p.publish()
	}
	if calls != 0 {
		p.fail()
		return 0
	}
	return p.budget
}

// polled records whether a poll saw work come.
func (p *poller) polled(came bool) {
	if !came {
		p.fail()
		return
	}
	p.budget, p.wait = p.max, 1
}

func (p *poller) fail() {
	if p.budget /= 2; p.budget >= p.max/16 {
		return
	}
	p.budget, p.off = 0, p.wait
	p.wait = min(2*p.wait, maxWait)
	p.publish()
}

// poll watches for work for up to d, reporting whether some arrived.
func poll(wake <-chan struct{}, done <-chan struct{}, d time.Duration) bool {
	loop.Store(loopPolling)
	start := time.Now()
	for i := 1; ; i++ {
		// A receive on one channel, with a default, reads an empty channel
		// without taking its lock; a select of two channels would take both
		// locks on every turn, and a poster's wake-up would wait for them.
		select {
		case <-wake:
			return true
		default:
		}
		if i%64 == 0 {
			select {
			case <-done:
				return true
			default:
			}
			if time.Since(start) > d {
				return false
			}
		}
	}
}
