//go:build unix

package pebblestore_test

import (
	"syscall"
	"time"
)

// cpuTime is the process's user + system CPU time (Pebble's background flushes and compactions included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
