package handoff

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestSpinEndsInABubble: in a testing/synctest bubble, whose clock stands
// still while a goroutine spins, a Spin on a call nobody delivers ends by
// its bound on polls, with the clock where it was. Catches a Spin bounded by
// the clock alone, which would spin for ever there (the test would hang).
func TestSpinEndsInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, watch := range []bool{false, true} {
			ctx, stop := context.Background(), context.CancelFunc(func() {})
			if watch {
				ctx, stop = context.WithCancel(ctx)
			}
			var c Call
			c.Arm(ctx)
			t0 := time.Now()
			if c.Spin(time.Millisecond) {
				t.Fatal("Spin = true on a call nobody started")
			}
			if !c.Start() {
				t.Fatal("Start after a Spin = false")
			}
			if c.Spin(100 * time.Microsecond) {
				t.Fatal("Spin = true on a call not delivered")
			}
			if !c.Deliver() {
				t.Fatal("Deliver = false with the caller spinning")
			}
			if !c.Spin(time.Hour) {
				t.Fatal("Spin = false on a delivered call")
			}
			if c.ch != nil {
				t.Fatal("a caller that spun until the delivery made a channel")
			}
			if d := time.Since(t0); d != 0 {
				t.Fatalf("the bubble's clock moved %v while the caller spun", d)
			}
			stop()
		}
	})
}
