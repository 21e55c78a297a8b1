package pebblestore_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test closes what it opens; a DB left open would leave Pebble's goroutines behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
