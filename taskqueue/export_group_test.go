package taskqueue

// QueuedAtCancel returns how many members of g had not started at the
// instant g was canceled: those never run.
func (g *Group) QueuedAtCancel() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.queuedAt
}
