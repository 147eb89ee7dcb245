package taskqueue

// take returns the members of the pending list in the order they were added,
// linked by next, and empties the list. Adding to the list costs a member one
// compare-and-swap and no lock; the runners take it at once.
func (g *Group) take() *member {
	var batch *member
	for m := g.pending.Swap(nil); m != nil; {
		next := m.next
		m.next = batch
		batch = m
		m = next
	}
	return batch
}

// pop returns the member to run next, or nil if none waits.
func (g *Group) pop() *member {
	g.outMu.Lock()
	m := g.out.Load()
	if m == nil {
		m = g.take()
	}
	if m != nil {
		g.out.Store(m.next)
		m.next = nil
	}
	g.outMu.Unlock()
	return m
}

// takeAll returns every member waiting, in order, and empties the lists.
func (g *Group) takeAll() *member {
	g.outMu.Lock()
	defer g.outMu.Unlock()
	first := g.out.Swap(nil)
	rest := g.take()
	if first == nil {
		return rest
	}
	last := first
	for last.next != nil {
		last = last.next
	}
	last.next = rest
	return first
}
