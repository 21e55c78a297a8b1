// Package cputime reads the CPU time the running process has used, for benchmarks and measuring tests.
//
// The machines Frontier's figures are taken on are shared, so a rate per wall second measures the neighbours
// as much as the code; a cost per CPU second (user plus system time of the whole process: GC workers, Pebble's
// background flushes and compactions, and in-process servers and clients included) does not. Benchmarks report
// it with b.ReportMetric beside the wall-clock rate:
//
//	cpu0 := cputime.Process()
//	// ... the measured work ...
//	b.ReportMetric((cputime.Process() - cpu0).Seconds()*1e3/float64(n), "cpu-ms/op")
//
// On systems without getrusage (non-unix) Process returns 0, so callers skip a CPU metric whose difference is
// not positive.
//
// cputime imports only the standard library; it sits at level 0 so that any package may use it.
package cputime
