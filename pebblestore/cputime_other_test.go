//go:build !unix

package pebblestore_test

import "time"

func cpuTime() time.Duration { return 0 }
