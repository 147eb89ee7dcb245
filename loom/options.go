package loom

import (
	"fmt"
	"log/slog"
	"time"
)

// An Option configures a Loom. Options are given to New or to Configure.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is a Loom's configuration, guarded by the Loom's mutex; a frame
// works on a copy taken when it begins.
type config struct {
	onPanic     func(*PanicError)   // never nil: handler, with the loom's name set as the panic's Source
	handler     func(*PanicError)   // WithPanicHandler's; nil: logPanic
	name        string              // WithName
	region      string              // the trace region of a frame: "loom frame", with the name
	observe     func(FrameStats)    // WithFrameObserver; nil: none
	wake        func()              // nil: none
	fixedDT     time.Duration       // WithFixedStep; 0: no fixed steps
	fixedStep   func(time.Duration) // WithFixedStep; nil: none
	maxActions  int                 // 0: no limit
	maxTime     time.Duration       // 0: no limit
	bgLimit     int
	manual      bool // the clock moves only with UpdateDelta
	bgConfigSet bool // WithBackgroundLimit was given
}

func defaultConfig() config {
	c := config{bgLimit: 8}
	c.settle()
	return c
}

// settle derives the fields that follow from the options, once they are
// applied, so that a frame allocates nothing for them.
func (c *config) settle() {
	h, name := c.handler, c.name
	if h == nil {
		h = logPanic
	}
	c.onPanic = func(p *PanicError) {
		if p.Source == "" {
			p.Source = name
		}
		h(p)
	}
	c.region = "loom frame"
	if name != "" {
		c.region += " " + name
	}
}

// logPanic is the default panic handler: it reports through log/slog's
// default logger, at level Error, with the loom's name, the panic value and
// the stack.
func logPanic(p *PanicError) {
	slog.Error("loom: a callback panicked", "loom", p.Source, "panic", p.Value, "stack", string(p.Stack))
}

// WithName names the loom: the name is the Source of its panics, and appears
// in the default panic report and in the runtime/trace region of each frame
// ("loom frame NAME").
func WithName(name string) Option {
	return optionFunc(func(c *config) { c.name = name })
}

// WithFrameObserver sets a function that the loom calls at the end of each
// frame, on the loom's goroutine, with the frame's statistics: a hook for a
// heads-up display or a metrics exporter (its Example publishes them
// through expvar). It must not block; nil removes it.
func WithFrameObserver(f func(FrameStats)) Option {
	return optionFunc(func(c *config) { c.observe = f })
}

// WithPanicHandler sets the function that receives the panics of actions,
// delayed actions, coroutines and background functions, each as a
// *PanicError with the stack of the panic. The handler runs on the goroutine
// that recovered the panic (the loom's, or a background worker's), and the
// frame goes on after it returns. It must not panic: that panic is not
// recovered, and leaves Update with the rest of the frame to the next one.
// Without this option, panics are reported
// through log/slog's default logger, at level Error, with the loom's name,
// the panic value and the stack, so that none goes unseen.
func WithPanicHandler(h func(*PanicError)) Option {
	if h == nil {
		panic("loom: WithPanicHandler(nil)")
	}
	return optionFunc(func(c *config) { c.handler = h })
}

// WithWakeFunc sets a function that the Loom calls, from the goroutine that
// posts, when work arrives for a loop that may be asleep: the first action
// posted, the first delayed action that is now the earliest, or the first
// coroutine started from another goroutine, since the last frame began or
// the loop last called Idle. It is called at most once per such batch of
// work, never with a lock held, and must not block: a loop sleeping in
// glfw.WaitEvents passes glfw.PostEmptyEvent. See also Idle.
func WithWakeFunc(f func()) Option {
	return optionFunc(func(c *config) { c.wake = f })
}

// WithBudget limits how much work a frame does, so that a flood of posts
// from workers cannot stall rendering: each frame runs at most maxActions
// posted actions and at most maxActions delayed actions (0: no limit), and
// starts no new one once maxTime has passed since the frame began (0: no
// limit). Each phase runs at least one, so neither kind starves the other.
// What is left carries over to the next frame, in order, ahead of newer work.
// Coroutines are not counted. WithBudget panics on negative values.
func WithBudget(maxActions int, maxTime time.Duration) Option {
	if maxActions < 0 || maxTime < 0 {
		panic(fmt.Sprintf("loom: WithBudget(%d, %v): limits must not be negative", maxActions, maxTime))
	}
	return optionFunc(func(c *config) { c.maxActions, c.maxTime = maxActions, maxTime })
}

// WithBackgroundLimit sets how many functions RunAsync runs at once (8 by
// default, as in the Loom this package ports). It must be given before the
// first RunAsync. WithBackgroundLimit panics if n < 1.
func WithBackgroundLimit(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("loom: WithBackgroundLimit(%d): limit must be positive", n))
	}
	return optionFunc(func(c *config) { c.bgLimit, c.bgConfigSet = n, true })
}

// ManualClock makes the Loom's clock start at zero and move only when the game
// drives it with UpdateDelta, for games that keep their own time (fixed steps,
// replays, tests): delays then count on that clock alone. Such a Loom panics
// on Update. It has no effect given to Configure.
func ManualClock() Option {
	return optionFunc(func(c *config) { c.manual = true })
}
