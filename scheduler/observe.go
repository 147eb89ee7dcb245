package scheduler

import (
	"context"
	"log/slog"
	"math"
	"math/bits"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// Observability. A Scheduler made WithName carries its name in every panic
// it reports, in runtime/pprof labels on its workers (key "queue"), so that
// CPU profiles attribute their time to it, and in runtime/trace regions, one
// per item, when tracing is on. Unnamed, it sets no labels and its regions
// are named "scheduler". Either way it samples how long items wait, from
// queued to started (see Latency).

// labelKey is the pprof label that names a worker's Scheduler.
const labelKey = "queue"

// regionName is the trace region type of the items of unnamed Schedulers.
const regionName = "scheduler"

// setLabels makes the calling goroutine, a worker or a drainer of s, carry
// s's pprof labels, if s has a name. It reports whether it did.
func (s *Scheduler) setLabels() bool {
	if s.cfg.labelCtx == nil {
		return false
	}
	pprof.SetGoroutineLabels(s.cfg.labelCtx)
	return true
}

// restoreLabels gives the calling goroutine, whose labels a drainer of a
// child of s changed, the labels that s's items run with: those of the
// nearest named Scheduler from s up through its targets, or none.
func (s *Scheduler) restoreLabels() {
	for a := s; a != nil; a = a.tree.parent {
		if a.cfg.labelCtx != nil {
			pprof.SetGoroutineLabels(a.cfg.labelCtx)
			return
		}
	}
	pprof.SetGoroutineLabels(context.Background())
}

// region is the trace region of an item, or nil if tracing is off.
type region struct{ r *trace.Region }

// region starts the trace region of an item of s, or returns a nil one if
// tracing is off, which costs an atomic load.
func (s *Scheduler) region() region {
	if !trace.IsEnabled() {
		return region{}
	}
	name := s.cfg.name
	if name == "" {
		name = regionName
	}
	return region{trace.StartRegion(context.Background(), name)}
}

// end ends r, if tracing was on when it started.
func (r region) end() {
	if r.r != nil {
		r.r.End()
	}
}

// logPanic is the default panic handler: a structured record through
// log/slog's default logger.
func logPanic(p *PanicError) {
	slog.Error("scheduler: recovered a panic", "source", p.Source, "panic", p.Value, "stack", string(p.Stack))
}

// Latency summarizes how long a Scheduler's items waited, from queued to
// started, over a sample of one item in 64, backlogs of up to four million
// items included. The percentiles are upper bounds, each a power of two
// nanoseconds (the longest Duration for a wait of over 2^62ns, 146 years),
// however long the waits.
type Latency struct {
	Samples  uint64        // items measured
	P50, P99 time.Duration // half and 99% of them waited at most this long
	Max      time.Duration // the longest wait, rounded up as the percentiles
}

// sampleEvery is how many items a Scheduler queues for each one whose wait
// it measures: one time.Now on queuing and one on starting, so that the cost
// per item stays well under a nanosecond.
const sampleEvery = 64

// waits is a Scheduler's sample of waits, under its mutex. Its sampler is
// made when the first item is sampled, so that a Scheduler through which
// few items pass (a child with a handful, say) carries none.
type waits struct {
	pushes uint64 // items queued, to pick the samples
	s      *sampler
}

// maxInFlight is how many sampled items may wait at once: a backlog of up
// to sampleEvery*maxInFlight items is sampled one in sampleEvery; the room
// for them grows with the backlog, a few bytes for every sampleEvery items
// queued, and goes once none is in flight.
const maxInFlight = 1 << 16

// sampler holds the sampled items in flight, oldest first, in a ring, and
// the histogram of their waits.
type sampler struct {
	ids  []ID
	at   []time.Time
	head int // index of the oldest in flight
	n    int // in flight
	hist histogram
}

// histogram counts waits by their bit length in nanoseconds, under its
// Scheduler's mutex. It keeps its summary until the next record: Stats,
// which a Keyed asks of each lane it retires, then costs no pass over the
// buckets.
type histogram struct {
	buckets [64]uint64 // by bits.Len64 of the wait: every Duration has one
	summary Latency
	stale   bool // a record came after summary was made
}

func (h *histogram) record(since time.Time) {
	d := max(time.Since(since), 0)
	h.buckets[bits.Len64(uint64(d))]++
	h.stale = true
}

// pushedLocked notes that the item id was queued, live items being queued
// now, and samples it if its turn has come and there is room for one more
// sample in flight. The room grows with live: samples of items removed
// behind a head that does not move stay in flight until it does, and must
// not make it grow.
func (w *waits) pushedLocked(id ID, live int) {
	w.pushes++
	if w.pushes%sampleEvery == 0 {
		w.sample(id, live)
	}
}

// sample samples the item id, queued with live items, if there is room.
func (w *waits) sample(id ID, live int) {
	if w.s == nil {
		w.s = new(sampler)
	}
	s := w.s
	if s.n == len(s.ids) && (s.n > live/sampleEvery+8 || !s.grow()) {
		return
	}
	i := (s.head + s.n) % len(s.ids)
	s.ids[i], s.at[i] = id, time.Now()
	s.n++
}

// grow makes room for more samples in flight, reporting false if there may
// be no more.
func (s *sampler) grow() bool {
	size := max(8, 2*len(s.ids))
	if size > maxInFlight {
		return false
	}
	ids, at := make([]ID, size), make([]time.Time, size)
	for k := range s.n {
		j := (s.head + k) % len(s.ids)
		ids[k], at[k] = s.ids[j], s.at[j]
	}
	s.ids, s.at, s.head = ids, at, 0
	return true
}

// startedLocked notes that the item id has started: it records the wait of
// the sample in flight of that item, and drops those before it, whose items
// were removed.
func (w *waits) startedLocked(id ID) {
	if s := w.s; s != nil && s.n > 0 {
		s.started(id)
	}
}

// started is startedLocked for a sampler with samples in flight.
func (s *sampler) started(id ID) {
	for s.n > 0 && s.ids[s.head] <= id {
		if s.ids[s.head] == id {
			s.hist.record(s.at[s.head])
		}
		s.head = (s.head + 1) % len(s.ids)
		s.n--
	}
	if s.n == 0 && len(s.ids) > 8 {
		s.ids, s.at, s.head = nil, nil, 0 // a burst's room is not kept
	}
}

func (w *waits) latency() Latency {
	if w.s == nil {
		return Latency{}
	}
	return w.s.hist.latency()
}

// latency summarizes h.
func (h *histogram) latency() Latency {
	if h.stale {
		h.summary, h.stale = h.summarize(), false
	}
	return h.summary
}

func (h *histogram) summarize() Latency {
	var n uint64
	for _, c := range h.buckets {
		n += c
	}
	var l Latency
	l.Samples = n
	if n == 0 {
		return l
	}
	var seen uint64
	for i, c := range h.buckets {
		if c == 0 {
			continue
		}
		seen += c
		bound := time.Duration(math.MaxInt64) // 2^63 would overflow
		if i < 63 {
			bound = time.Duration(1) << i
		}
		if l.P50 == 0 && seen*2 >= n {
			l.P50 = bound
		}
		if l.P99 == 0 && seen*100 >= n*99 {
			l.P99 = bound
		}
		l.Max = bound
	}
	return l
}
