package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"github.com/taskqueue-go/taskqueue/scheduler"
)

// blocker is an item, or a function run in place, that runs until released,
// noting whether it runs now.
type blocker struct {
	release  chan struct{}
	released bool
	running  bool // set and cleared by the blocker, read after synctest.Wait
	cancel   context.CancelFunc
	done     bool
	sl       scheduler.Slot
}

func newBlocker() *blocker { return &blocker{release: make(chan struct{})} }

// let releases b, once.
func (b *blocker) let() {
	if !b.released {
		b.released = true
		close(b.release)
	}
}

func (b *blocker) Run(sl scheduler.Slot) {
	b.sl = sl
	b.running = true
	<-b.release
	b.running = false
	b.done = true
}

// lendMachine drives the lending of one item's slot of a target: the item
// (the holder, of serial child c of target t) runs until released; its
// goroutines wait for sibling b (Await, which lends the holder's slot of t)
// and run functions in its place (TryRunContext on c, which takes the slot
// back); t's own items compete for t's slots. After each step it checks
// the slot's lending state against the count of waits and uses: lent
// exactly while some wait and none runs, never used while lent, and t never
// running more than its limit.
type lendMachine struct {
	limit   int
	t, b, c *scheduler.Scheduler
	holder  *blocker
	held    scheduler.HeldSlot
	ended   bool       // the holder's run has ended
	waits   []*blocker // waits that lent while the holder ran, not yet released
	gone    []*blocker // waits released, or that became an outsider's
	uses    []*blocker // functions run, or waiting to run, in the holder's place
	own     []*blocker // t's own items
}

func newLendMachine(t *rapid.T) *lendMachine {
	m := &lendMachine{limit: rapid.IntRange(1, 3).Draw(t, "limit")}
	m.t = scheduler.New(m.limit)
	m.b = scheduler.New(1, scheduler.WithTarget(m.t))
	m.c = scheduler.New(1, scheduler.WithTarget(m.t))
	m.holder = newBlocker()
	if _, err := m.c.Enqueue(m.holder); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	if !m.holder.running {
		t.Fatal("the holder did not start on an idle tree")
	}
	m.held = m.t.Held(m.holder.sl)
	return m
}

func (m *lendMachine) Wait(t *rapid.T) {
	w := newBlocker()
	sl := m.holder.sl
	go func() {
		m.b.Await(sl, func() { <-w.release })
		w.done = true
	}()
	synctest.Wait()
	if m.ended {
		m.gone = append(m.gone, w) // an outsider's wait: it lends nothing
	} else {
		m.waits = append(m.waits, w)
	}
}

func (m *lendMachine) EndWait(t *rapid.T) {
	if len(m.waits) == 0 {
		t.Skip("no wait")
	}
	i := rapid.IntRange(0, len(m.waits)-1).Draw(t, "wait")
	w := m.waits[i]
	m.waits = append(m.waits[:i], m.waits[i+1:]...)
	w.let()
	m.gone = append(m.gone, w)
}

func (m *lendMachine) Use(t *rapid.T) {
	if m.ended {
		t.Skip("the holder's run has ended")
	}
	f := newBlocker()
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	sl := m.holder.sl
	go func() {
		if _, err := m.c.TryRunContext(ctx, sl, f.Run); err != nil {
			f.done = true // given up before it ran
		}
	}()
	m.uses = append(m.uses, f)
}

func (m *lendMachine) EndUse(t *rapid.T) {
	if len(m.uses) == 0 {
		t.Skip("no use")
	}
	i := rapid.IntRange(0, len(m.uses)-1).Draw(t, "use")
	f := m.uses[i]
	m.uses = append(m.uses[:i], m.uses[i+1:]...)
	if rapid.Bool().Draw(t, "cancel") {
		f.cancel() // may find f running, which it then leaves alone
	}
	f.let()
}

func (m *lendMachine) Own(t *rapid.T) {
	o := newBlocker()
	if _, err := m.t.Enqueue(o); err != nil {
		t.Fatal(err)
	}
	m.own = append(m.own, o)
}

func (m *lendMachine) EndOwn(t *rapid.T) {
	if len(m.own) == 0 {
		t.Skip("no item")
	}
	i := rapid.IntRange(0, len(m.own)-1).Draw(t, "item")
	o := m.own[i]
	m.own = append(m.own[:i], m.own[i+1:]...)
	o.let()
}

func (m *lendMachine) EndRun(t *rapid.T) {
	if m.ended || len(m.uses) > 0 {
		t.Skip("ended, or functions run in its place")
	}
	m.holder.let()
	m.ended = true
	m.gone = append(m.gone, m.waits...) // outsiders now: the run's end took their slots back
	m.waits = nil
}

func (m *lendMachine) Check(t *rapid.T) {
	synctest.Wait()
	lends, uses, lentOut, moving, lent := m.held.LendState()
	if s := m.t.Books(); s != "" {
		t.Fatalf("target's books: %s", s)
	}
	if got, want := int(lends), len(m.waits); got != want {
		t.Fatalf("lends = %d; want %d waits of the running holder", got, want)
	}
	pendingUses := 0
	inPlace := 0
	for _, f := range m.uses {
		if !f.done {
			pendingUses++
		}
		if f.running {
			inPlace++
		}
	}
	if !m.ended && int(uses) != pendingUses {
		t.Fatalf("uses = %d; want %d functions run or waiting in place", uses, pendingUses)
	}
	if !moving && lentOut != (lends > 0 && uses == 0) {
		t.Fatalf("lent = %v with %d waits and %d uses: lent exactly while some wait and none runs", lentOut, lends, uses)
	}
	if lentOut && inPlace > 0 {
		t.Fatalf("%d functions run in the holder's place while its slot is lent", inPlace)
	}
	if lent < 0 || lent > 1 {
		t.Fatalf("the target counts %d slots lent; the one holder lends at most one", lent)
	}
	running := 0
	for _, o := range m.own {
		if o.running {
			running++
		}
	}
	if !m.ended && !lentOut {
		running++ // the holder's slot, used by it or in its place
	}
	if running > m.limit {
		t.Fatalf("%d slots of the target in use; limit %d", running, m.limit)
	}
	// No item of the target's own waits while a slot for it is free: the
	// holder's slot serves it neither lent (a lent slot serves children's
	// turns) nor held.
	holding := 0
	if !m.ended {
		holding = 1
	}
	ownRunning, ownWaiting := 0, 0
	for _, o := range m.own {
		switch {
		case o.running:
			ownRunning++
		case !o.done:
			ownWaiting++
		}
	}
	if ownWaiting > 0 && ownRunning+holding < m.limit {
		t.Fatalf("%d of the target's items wait with %d running and the holder's slot %d of %d: a slot is free", ownWaiting, ownRunning, holding, m.limit)
	}
}

func (m *lendMachine) finish(t *rapid.T) {
	for _, bs := range [][]*blocker{m.waits, m.gone, m.uses, m.own, {m.holder}} {
		for _, b := range bs {
			b.let()
		}
	}
	for _, f := range m.uses {
		f.cancel()
	}
	synctest.Wait()
	for _, w := range m.gone {
		if !w.done {
			t.Fatalf("a wait did not return after it was released")
		}
	}
	if lends, uses, lentOut, moving, lent := m.held.LendState(); lends != 0 || uses != 0 || lentOut || moving || lent != 0 {
		t.Fatalf("after everything ended: lends %d uses %d lent %v moving %v, target lent %d", lends, uses, lentOut, moving, lent)
	}
	if a := m.t.Active(); a != 0 {
		t.Fatalf("after everything ended the target holds %d slots", a)
	}
	if s := fmt.Sprint(m.t.Books()); s != "" {
		t.Fatalf("target's books: %s", s)
	}
	m.t.Close()
	m.b.Close()
	m.c.Close()
}

// TestLendModel runs random sequences of waits that lend an item's slot,
// functions run in its place, the target's own items and the item's end,
// checking the slot's lending state and the target's limit after each step.
func TestLendModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbled{t}, func(t *rapid.T) {
			m := newLendMachine(t)
			defer m.finish(t)
			t.Repeat(rapid.StateMachineActions(m))
		})
	})
}
