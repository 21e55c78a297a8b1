package cputime

import (
	"testing"
	"time"
)

// TestProcess checks that the CPU time is positive where the system reports it, never goes back, and grows
// while this goroutine spins. The spin is bounded by wall time, not by an expected rate: the machine may be
// loaded.
func TestProcess(t *testing.T) {
	t0 := Process()
	if t0 == 0 {
		t.Skip("this system reports no CPU time") // non-unix; on unix the test binary has used some by now
	}
	x := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		for i := range 1 << 16 {
			x ^= i * i
		}
		t1 := Process()
		if t1 < t0 {
			t.Fatalf("Process() went back from %v to %v", t0, t1)
		}
		if t1 > t0 {
			return
		}
	}
	t.Errorf("Process() stayed at %v through 30 s of spinning (x=%d)", t0, x)
}
