package testkit_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/taskqueue-go/taskqueue/internal/testkit"
)

// childEnv makes the test binary, run again by TestRunChild, print its
// value and exit with status 3 instead of running the tests.
const childEnv = "TESTKIT_TEST_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		fmt.Printf("the child got %q", v)
		os.Exit(3)
	}
	goleak.VerifyTestMain(m, testkit.LeakOptions()...)
}
