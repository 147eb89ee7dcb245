package loom

// A contextWatch holds the running coroutines bound to contexts that share
// one Done channel (StartCoroutineContext), so that each coroutine pass
// looks at each such channel once, however many coroutines it ends: the
// coroutines of a level or a scene bound to its context cost a pass one
// look, not one each.
type contextWatch struct {
	done <-chan struct{}
	cs   []*Coroutine // in no order; each knows its index (Coroutine.boundIx)
	idx  int          // its index in contextWatches.list
}

// contextWatches is the set of a loom's contextWatch, owned by the loom's
// goroutine. A watch exists while it holds a coroutine.
type contextWatches struct {
	list    []*contextWatch
	of      map[<-chan struct{}]*contextWatch
	stopped []*Coroutine // stopCanceled's buffer
}

// bind adds c, which begins and has a context that can end, to the watch of
// its context's Done channel.
func (co *coroutines) bind(c *Coroutine) {
	ws := &co.watches
	w := ws.of[c.ctxDone]
	if w == nil {
		if ws.of == nil {
			ws.of = make(map[<-chan struct{}]*contextWatch)
		}
		w = &contextWatch{done: c.ctxDone, idx: len(ws.list)}
		ws.of[c.ctxDone] = w
		ws.list = append(ws.list, w)
	}
	c.bound, c.boundIx = w, len(w.cs)
	w.cs = append(w.cs, c)
}

// unbind takes c, which ends, out of its watch, and drops the watch once it
// is empty.
func (co *coroutines) unbind(c *Coroutine) {
	w := c.bound
	last := len(w.cs) - 1
	moved := w.cs[last]
	w.cs[c.boundIx], moved.boundIx = moved, c.boundIx
	w.cs[last] = nil
	w.cs = w.cs[:last]
	c.bound = nil
	if len(w.cs) > 0 {
		return
	}
	ws := &co.watches
	last = len(ws.list) - 1
	other := ws.list[last]
	ws.list[w.idx], other.idx = other, w.idx
	ws.list[last] = nil
	ws.list = ws.list[:last]
	delete(ws.of, w.done)
}

// stopCanceled stops, at the start of a coroutine pass, the coroutines whose
// context is done, whatever they wait for. The watch of a context
// (context.AfterFunc) runs on a goroutine of its own, whenever the runtime
// gets to it; this look at each context makes the first pass that begins
// after a context's end the one that stops its coroutines
// (BenchmarkCoroutineContexts measures it).
func (l *Loom) stopCanceled() {
	ws := &l.co.watches
	stopped := ws.stopped[:0]
	for _, w := range ws.list {
		select {
		case <-w.done:
			stopped = append(stopped, w.cs...)
		default:
		}
	}
	// The stops change the watches: each ends its coroutine, which leaves
	// its watch. A coroutine that begins meanwhile with a context already
	// done never binds: begin ends it.
	for _, c := range stopped {
		if !c.isDone() {
			c.stopReq.Store(true)
			l.stopNow(c, ErrStopped)
		}
	}
	clear(stopped)
	ws.stopped = stopped[:0]
}
