package testkit_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testkit.LeakOptions()...) }
