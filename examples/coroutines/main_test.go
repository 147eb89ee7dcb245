package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var want = map[string]string{
	// The first article lists this output.
	"nested": `Logic out
Coroutine inner 0
Coroutine inner 1
Coroutine inner 2
Coroutine inner 3
Coroutine inner 4
Logic out end
`,
	"waits": `0.0s wait for 1s
1.0s wait for 2s
3.0s wait for 3s
6.0s end
`,
	"frames": `------------------------------ Tick ...... 1
------------------------------ Tick ...... 2
------------------------------ Tick ...... 3
------------------------------ Tick ...... 4
------------------------------ Tick ...... 5
Begin (i = 6)
------------------------------ Tick ...... 6
Wait4 (i = 7)
------------------------------ Tick ...... 7
Wait5 (i = 8)
------------------------------ Tick ...... 8
Wait6 (i = 9)
------------------------------ Tick ...... 9
------------------------------ Tick ...... 10
End (i = 11)
` + ticks(11, 20),
}

func ticks(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "------------------------------ Tick ...... %d\n", i)
	}
	return b.String()
}

// TestPrograms runs each program in a synctest bubble, where its seconds of
// frames pass at once, and checks its output exactly.
func TestPrograms(t *testing.T) {
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var out bytes.Buffer
				onRenderThread(func() { p.run(&out) })
				if got := out.String(); got != want[p.name] {
					t.Errorf("output:\n%s\nwant:\n%s", got, want[p.name])
				}
			})
		})
	}
}
