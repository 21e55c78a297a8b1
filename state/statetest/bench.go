package statetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/state"
)

// FPs returns n deterministic fingerprints, FP(0) … FP(n-1).
func FPs(n int) []frontier.Fingerprint {
	out := make([]frontier.Fingerprint, n)
	for i := range out {
		out[i] = FP(i)
	}
	return out
}

// Load writes FP(0) … FP(n-1) to s in batches of 10,000 (state CRAWLED).
func Load(tb testing.TB, s state.Store, fps []frontier.Fingerprint) {
	tb.Helper()
	es := make([]state.Entry, 10_000)
	for i := range es {
		es[i] = state.Entry{State: frontier.Crawled}
	}
	for lo := 0; lo < len(fps); lo += len(es) {
		hi := min(lo+len(es), len(fps))
		if err := s.Put(context.Background(), fps[lo:hi], es[:hi-lo]); err != nil {
			tb.Fatalf("statetest: load: %v", err)
		}
	}
}

// BenchGet measures batched lookups on s, which must hold stored (the first fingerprints of FPs), with the
// given share of hits: each op is one Get of batch fingerprints; misses are fingerprints never stored.
// It reports lookups/s (wall) and lookups/cpu-s (per second of the process's CPU time).
func BenchGet(b *testing.B, s state.Store, stored []frontier.Fingerprint, batch int, hits float64) {
	rng := rand.New(rand.NewPCG(7, 11))
	// Pre-build 64 query batches so the loop measures the store, not SHA-1.
	const nq = 64
	queries := make([][]frontier.Fingerprint, nq)
	for q := range queries {
		fps := make([]frontier.Fingerprint, batch)
		for i := range fps {
			if rng.Float64() < hits {
				fps[i] = stored[rng.IntN(len(stored))]
			} else {
				fps[i] = FP(len(stored) + 1 + rng.IntN(1<<40))
			}
		}
		queries[q] = fps
	}
	out := make([]state.Entry, batch)
	found := make([]bool, batch)
	ctx := context.Background()
	n := 0
	start, cpu := time.Now(), cputime.Process()
	b.ResetTimer()
	for b.Loop() {
		if err := s.Get(ctx, queries[n%nq], out, found); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n*batch)/time.Since(start).Seconds(), "lookups/s")
	if c := cputime.Process() - cpu; c > 0 {
		b.ReportMetric(float64(n*batch)/c.Seconds(), "lookups/cpu-s")
	}
}

// Bench runs BenchGet for all hits, all misses and 80% hits over a store of stored fingerprints, in batches
// of 1,024. newStore returns an empty store; Bench loads it once per case, then calls settle (if not nil)
// so the implementation can reach its steady state (e.g. flush and compact) before the clock starts.
func Bench(b *testing.B, newStore func(b *testing.B) state.Store, stored int, settle func(b *testing.B, s state.Store)) {
	fps := FPs(stored)
	for _, hits := range []float64{1, 0, 0.8} {
		b.Run(fmt.Sprintf("hits=%d%%", int(hits*100)), func(b *testing.B) {
			s := newStore(b)
			Load(b, s, fps)
			if settle != nil {
				settle(b, s)
			}
			BenchGet(b, s, fps, 1024, hits)
		})
	}
}
