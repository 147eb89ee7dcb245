package scheduler

// Active returns the number of slots in use: worker goroutines plus TryRun
// callers.
func (s *Scheduler) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// List exposes the list type to the model tests.
type List struct{ l list }

func (l *List) Push(t Task) ID    { return l.l.push(t) }
func (l *List) Pop() Task         { return l.l.pop() }
func (l *List) Front() Task       { return l.l.front() }
func (l *List) Get(id ID) Task    { return l.l.get(id) }
func (l *List) Remove(id ID) Task { return l.l.remove(id) }
func (l *List) Drain() []Task     { return l.l.drain() }
func (l *List) Len() int          { return l.l.live }
func (l *List) Cap() int          { return len(l.l.buf) }

// Snapshot returns the queued items and the slots in use, read together.
func (s *Scheduler) Snapshot() (pending, active int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list.live, s.active
}
