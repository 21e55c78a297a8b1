//go:build unix

package strategyworker

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used so far, GC workers included. On a shared
// machine it measures a benchmark's cost per core better than wall time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
