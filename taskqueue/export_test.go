package taskqueue

// HasTimer reports whether q holds a timer for delayed tasks.
func (q *Queue) HasTimer() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.timer != nil
}
