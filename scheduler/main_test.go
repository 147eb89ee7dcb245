package scheduler_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/leaktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaktest.Options()...)
}
