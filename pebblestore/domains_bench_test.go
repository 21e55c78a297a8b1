package pebblestore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/metadata"
)

// BenchmarkDomainsAddOnce is a strategy worker's counters flush: each op is one AddOnce of 400 tallies (200 hosts,
// two sources' worth of keys: the hosts and their templates), the same keys batch after batch with a rising Seq.
// It reports the CPU per tally.
//
//	go test -run XXX -bench BenchmarkDomainsAddOnce -benchtime 200x ./pebblestore/
func BenchmarkDomainsAddOnce(b *testing.B) {
	db := openBench(b, false)
	d := db.Domains()
	ctx := context.Background()
	tallies := make([]metadata.Tally, 400)
	for i := range tallies {
		tallies[i] = metadata.Tally{Domain: fmt.Sprintf("127.0.%d.%d:8080/p/%d", i/250, i%250+1, i%2), Delta: 1, Source: "sw/0"}
	}
	var seq int64
	cpu0 := cputime.Process()
	for b.Loop() {
		seq++
		for i := range tallies {
			tallies[i].Seq = seq
		}
		if _, err := d.AddOnce(ctx, "scope_host_pages", tallies); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cputime.Process() - cpu0; cpu > 0 && cpu0 > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*len(tallies)), "cpu-ns/tally")
	}
}
