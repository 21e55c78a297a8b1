//go:build integration

package hbase

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/frontiercrawl/frontier/metadata"
)

// BenchmarkIntegrationCounterWrite: exact counter writes (Domains.AddOnce, one tally per call) on the real
// HBase, with the round trips (gets + check-and-puts) each costs:
//
//   - one-writer: one Domains writes one row, as a strategy worker writes its hosts' rows: one round trip a
//     write with the row cache, two without (cache=off, the cost before the cache).
//   - two-writers: two Domains take turns on one row (two DB workers' crawl totals): each write finds the row
//     moved by the other, so its cached check fails and it reads (three round trips; two without the cache).
//   - rows=64: one call writing 64 rows (a batch's per-host error counters), in parallel on the pool.
func BenchmarkIntegrationCounterWrite(b *testing.B) {
	cfg := testConfig(b)
	c := openTest(b, cfg, domainsTable)
	ctx := context.Background()
	trips := func() float64 {
		return testutil.ToFloat64(c.m.calls.WithLabelValues("get")) + testutil.ToFloat64(c.m.calls.WithLabelValues("checkAndMutate"))
	}
	for _, tc := range []struct {
		name    string
		writers int
		rows    int
	}{{"one-writer", 1, 1}, {"two-writers", 2, 1}, {"rows=64", 1, 64}} {
		for _, cache := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/cache=%v", tc.name, map[bool]string{true: "on", false: "off"}[cache]), func(b *testing.B) {
				doms := make([]*Domains, tc.writers)
				for i := range doms {
					doms[i] = c.Domains()
					if !cache {
						doms[i].cache.max = 0
					}
				}
				prefix := fmt.Sprintf("%s-%v-", tc.name, cache)
				tallies := make([]metadata.Tally, tc.rows)
				seq := make([]int64, tc.writers)
				writes, start := 0, trips()
				for i := 0; b.Loop(); i++ {
					w := i % tc.writers
					seq[w]++
					for r := range tallies {
						tallies[r] = metadata.Tally{Domain: fmt.Sprintf("%s%d", prefix, r), Delta: 1, Source: fmt.Sprintf("w%d", w), Seq: seq[w]}
					}
					if _, err := doms[w].AddOnce(ctx, "n", tallies); err != nil {
						b.Fatal(err)
					}
					writes += tc.rows
				}
				got, err := c.Domains().Get(ctx, "n", []string{prefix + "0"})
				if err != nil || got[0] != int64(b.N) {
					b.Fatalf("counter = %v, %v after %d writes", got, err, b.N)
				}
				b.ReportMetric(float64(writes)/b.Elapsed().Seconds(), "writes/s")
				b.ReportMetric((trips()-start)/float64(writes), "round-trips/write")
			})
		}
	}
}
