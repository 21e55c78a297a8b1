package frontiertest

import (
	"os"
	"testing"
)

// Server returns the value of the environment variable name, which deploy/env sets for the servers deploy/up
// started (FRONTIER_TEST_KAFKA, FRONTIER_TEST_HBASE, FRONTIER_TEST_DEPLOY_DIR, …). When it is unset the test is
// skipped on a developer's machine, and fails under CI=true, where a missing server is a failure.
func Server(tb testing.TB, name string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is unset under CI=true: start the servers with deploy/up and export $(deploy/env)", name)
		}
		tb.Skipf("%s is unset; run deploy/up and export $(deploy/env)", name)
	}
	return v
}
