package scheduler

import "sync/atomic"

// Claims. A worker of a serial Scheduler takes a run of items out of the
// list in one critical section (claim), then runs them one after the other
// without the lock (nextClaimed), and ends the claim under the lock again
// (unclaim): one lock round trip per run of items instead of one per item.
// An item of a claim that has not started is still queued in every way that
// shows: each goes to whoever swaps its data word first, the worker or a
// removal (TryDequeue, DequeueAll); Suspend and SetLimit revoke the part of a
// claim the worker has not reached, which goes back to the head of the list;
// Stats counts it as pending.

// claim takes up to max items from the head of the first segment out of the
// list, stopping before a barrier, for the caller to run with nextClaimed and end
// with unclaim. It returns the segment. The list must not be empty, its head
// must not be a barrier, and no other claim may be under way.
func (l *list) claim(max int32) *segment {
	seg := l.segs[0]
	from, to := seg.head, seg.head
	n := int32(0)
	for to < seg.n && n < max {
		if atomic.LoadPointer(&seg.data[to]) != nil {
			if seg.tags[to]&barrierTag != 0 {
				break
			}
			n++
		}
		to++
	}
	seg.head = to
	seg.live -= n
	l.live -= int(n)
	l.claimLeft.Store(n)
	l.claimNext.Store(from)
	l.claimed, l.claimFrom, l.claimTo = seg, from, to
	return seg
}

// nextClaimed returns the next item of the claim of seg for its worker, which
// runs without the lock, and its slot, or false once the claim is used up or
// revoked. Items that a removal took first are skipped.
func (l *list) nextClaimed(seg *segment, to int32) (Task, int32, bool) {
	for {
		i := l.claimNext.Load()
		if i >= to || !l.claimNext.CompareAndSwap(i, i+1) {
			return nil, 0, false
		}
		if t, ok := seg.take(i); ok {
			l.claimLeft.Add(-1)
			return t, i, true
		}
	}
}

// revoke puts the items of the claim that its worker has not reached back at
// the head of the list, where any worker may start them: s was suspended, or
// its limit changed. The worker keeps the item it runs.
func (l *list) revoke() {
	seg := l.claimed
	if seg == nil {
		return
	}
	cut := l.claimNext.Swap(l.claimTo)
	back := int32(0)
	for i := cut; i < l.claimTo; i++ {
		if atomic.LoadPointer(&seg.data[i]) != nil {
			back++
		}
	}
	l.claimTo = cut
	if back > 0 {
		l.claimLeft.Add(-back)
		seg.head = cut
		seg.live += back
		l.live += int(back)
		l.trim()
	}
}

// unclaim ends the claim, putting back what its worker did not run.
func (l *list) unclaim() {
	l.revoke()
	l.claimed = nil
	l.trim()
}
