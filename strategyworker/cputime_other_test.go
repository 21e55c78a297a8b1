//go:build !unix

package strategyworker

import "time"

func cpuTime() time.Duration { return 0 }
