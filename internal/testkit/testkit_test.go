package testkit_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

func TestPanicValue(t *testing.T) {
	if v := testkit.PanicValue(func() {}); v != nil {
		t.Errorf("PanicValue(no panic) = %v; want nil", v)
	}
	if v := testkit.PanicValue(func() { panic(7) }); v != 7 {
		t.Errorf("PanicValue(panic(7)) = %v; want 7", v)
	}
	if m := testkit.PanicMessage(func() { panic("boom") }); m != "boom" {
		t.Errorf(`PanicMessage(panic("boom")) = %q; want "boom"`, m)
	}
}

func TestPanics(t *testing.T) {
	var p testkit.Panics[int]
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() { p.Add(i) })
	}
	wg.Wait()
	if n := p.Len(); n != 10 {
		t.Errorf("Len() = %d; want 10", n)
	}
	if got := p.Take(); len(got) != 10 || p.Len() != 0 {
		t.Errorf("Take() = %v, then Len() = %d; want 10 values, then 0", got, p.Len())
	}
}

func TestGauge(t *testing.T) {
	g := &testkit.Gauge{Name: "q", Limit: 2}
	g.Enter("a")
	g.Enter("b")
	if g.Over() != "" {
		t.Errorf("Over() = %q at the limit; want none", g.Over())
	}
	g.Enter("c")
	g.Leave()
	g.Leave()
	if g.Now() != 1 || g.Peak() != 3 {
		t.Errorf("Now, Peak = %d, %d; want 1, 3", g.Now(), g.Peak())
	}
	if want := "q: 3 functions at once (limit 2), entering c"; g.Over() != want {
		t.Errorf("Over() = %q; want %q", g.Over(), want)
	}
	var h testkit.Gauge
	both := testkit.Gauges{g, &h}
	both.Enter("d")
	if g.Now() != 2 || h.Now() != 1 {
		t.Errorf("after Gauges.Enter: Now = %d, %d; want 2, 1", g.Now(), h.Now())
	}
	both.Leave()
	if g.Now() != 1 || h.Now() != 0 || h.Peak() != 1 {
		t.Errorf("after Gauges.Leave: Now = %d, %d, Peak %d; want 1, 0, 1", g.Now(), h.Now(), h.Peak())
	}
}

func TestIsClosed(t *testing.T) {
	ch := make(chan struct{})
	if testkit.IsClosed(ch) {
		t.Error("IsClosed(open channel) = true")
	}
	close(ch)
	if !testkit.IsClosed(ch) {
		t.Error("IsClosed(closed channel) = false")
	}
}

func TestLog(t *testing.T) {
	var l testkit.Log
	l.Add("b")
	l.Add("a")
	if got, want := l.Take(), []string{"b", "a"}; !slices.Equal(got, want) {
		t.Errorf("Take() = %q; want %q, in the order added", got, want)
	}
	if got := l.Take(); len(got) != 0 {
		t.Errorf("second Take() = %q; want nothing", got)
	}
	var wg sync.WaitGroup
	for _, e := range []string{"c", "a", "b"} {
		wg.Go(func() { l.Add(e) })
	}
	wg.Wait()
	if got, want := l.TakeSorted(), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("TakeSorted() = %q; want %q", got, want)
	}
}
