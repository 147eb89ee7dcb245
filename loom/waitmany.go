package loom

import (
	"context"
	"fmt"
	"slices"
)

// WaitAll and WaitAny make one wait of several Waitables, polled as one;
// FirstDone tells a WaitAny's coroutine which member ended, and Await is
// the goroutine side of WaitAll.

// WaitAll resumes the coroutine in the first frame, from the next one on, in
// which every one of ws is done (their Done channels are closed): a frame in
// all, however many there are, not a frame for each, as a loop of WaitFor
// would take. It keeps a copy of ws: changing ws afterwards changes nothing.
// It costs one allocation when it is made (two with more than four members),
// none when yielded (TestWaitAllAllocatesOnlyWhenMade), and a look at each
// member once over the whole wait. Await(ctx, ws...)
// then returns at once with the error of the first member, in the order
// given, that failed.
func WaitAll(ws ...Waitable) Instruction {
	return Instruction{kind: waitAll, ref: newMulti("WaitAll", ws)}
}

// WaitAny resumes the coroutine in the first frame, from the next one on, in
// which at least one of ws is done. FirstDone then tells which. With no
// member, it resumes in the next frame. A wait bounded by a duration is a
// WaitAny with a Timer of a nil function: Loom.PostAfterScaled(d, nil) on
// scaled time, or Loom.PostAfter(d, nil) on unscaled time. It keeps a copy
// of ws and costs what WaitAll does.
func WaitAny(ws ...Waitable) Instruction {
	return Instruction{kind: waitAny, ref: newMulti("WaitAny", ws)}
}

// FirstDone returns the index of the first of ws, in the order given, that is
// done, or -1 if none is. It does not block.
//
// Called by a coroutine as it resumes from a WaitAny of the same members, it
// names the first member done in the frame in which the coroutine resumed,
// and the functions that member posted to the loom before it was done have
// run: a wait held for the posts of a member (see WaitFor) is held, when a
// member before it in order ends meanwhile, for that one's posts too. Only a
// member that ends on another goroutine while the coroutine resumes can come
// before it, its posts not run yet.
func FirstDone(ws ...Waitable) int {
	mustWaitables("FirstDone", ws)
	for i, w := range ws {
		select {
		case <-w.Done():
			return i
		default:
		}
	}
	return -1
}

// firstErr returns the error of the first of ws, in the order given, that is
// done with an error, or nil. A member reports its error through an Err
// method, as a *Coroutine and a taskqueue.Handle do; members without one
// count as succeeded. It does not block.
func firstErr(ws ...Waitable) error {
	for _, w := range ws {
		e, ok := w.(interface{ Err() error })
		if !ok {
			continue
		}
		select {
		case <-w.Done():
			if err := e.Err(); err != nil {
				return err
			}
		default:
		}
	}
	return nil
}

// multi is the state of a WaitAll or WaitAny. It keeps a copy of the
// members, so that the caller's slice is the caller's again; a wait of up
// to inlineMembers members holds them, and their channels, in itself.
type multi struct {
	ws    []Waitable
	chans []<-chan struct{} // the members' Done channels, read when first yielded
	next  int               // WaitAll: the members before next are done
	first int               // WaitAny: the first member, in order, done at the latest look; -1 if none

	inline      [inlineMembers]Waitable
	inlineChans [inlineMembers]<-chan struct{}
}

// inlineMembers is how many members a WaitAll or WaitAny holds without an
// allocation of their own.
const inlineMembers = 4

func newMulti(call string, ws []Waitable) *multi {
	mustWaitables(call, ws)
	m := &multi{}
	if len(ws) <= inlineMembers {
		m.ws = append(m.inline[:0], ws...)
	} else {
		m.ws = slices.Clone(ws)
	}
	return m
}

// mustWaitables panics, naming call, if a member of ws is nil, or a nil
// *Coroutine or *Task, which could never end.
func mustWaitables(call string, ws []Waitable) {
	for i, w := range ws {
		if w == nil {
			panic(fmt.Sprintf("loom: %s with a nil member at index %d", call, i))
		}
		if c, ok := w.(ofLoom); ok && c.coroutine() == nil {
			panic(fmt.Sprintf("loom: %s with a nil %T at index %d", call, w, i))
		}
	}
}

// ready reports whether the wait of kind is over. The first call reads the
// members' Done channels, which may panic; the loom's caller protects it.
func (m *multi) ready(kind waitKind) bool {
	if m.chans == nil {
		if len(m.ws) <= inlineMembers {
			m.chans = m.inlineChans[:len(m.ws)]
		} else {
			m.chans = make([]<-chan struct{}, len(m.ws))
		}
		for i, w := range m.ws {
			m.chans[i] = w.Done()
		}
	}
	if kind == waitAll {
		for ; m.next < len(m.chans); m.next++ {
			select {
			case <-m.chans[m.next]:
			default:
				return false
			}
		}
		return true
	}
	if len(m.chans) == 0 {
		m.first = -1
		return true
	}
	for i, ch := range m.chans {
		select {
		case <-ch:
			m.first = i
			return true
		default:
		}
	}
	m.first = -1
	return false
}

// Await blocks until every one of ws is done, or until ctx is done, and
// returns the error of the first of ws, in the order given, that failed, or
// ctx.Err(); if every one of ws is done already, it returns their outcome
// even if ctx is done. It is the goroutine side of WaitAll,
// for code off the loom's goroutine that waits on a mix of coroutines, loom
// tasks and queue handles; the loom's own goroutine must not block on its
// coroutines, which only its frames move. Await watches the channels of
// Done and nothing else: a task of a queue that awaits its own queue's
// handles should call their Wait instead, which panics at once on a wait
// that could only wait for itself, where Await waits until ctx is done; and
// a handle's panic goes to its queue's panic handler too unless the handle's
// task was submitted with an Awaited context (see package taskqueue).
func Await(ctx context.Context, ws ...Waitable) error {
	mustCtx("Await", ctx)
	mustWaitables("Await", ws)
	for _, w := range ws {
		if !waitDone(ctx, w.Done()) {
			return ctx.Err()
		}
	}
	return firstErr(ws...)
}

// waitDone waits until done is closed, reporting true, or until ctx is
// done, reporting false. Work that has ended wins over a context that is
// done too: a select between two ready channels picks either, and the
// outcome of ended work must not depend on that draw.
func waitDone(ctx context.Context, done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
