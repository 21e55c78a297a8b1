//go:build integration

package hbase

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/state"
)

// Benchmarks on the real HBase (export $(deploy/env)); the figures go to bench/results/hbase.md. Sizes can be
// changed with FRONTIER_BENCH_STATES (rows preloaded into states, default 1,000,000) and FRONTIER_BENCH_QUEUE
// (rows preloaded into the queue for Next, default 1,000,000).

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func benchFP(i int) frontier.Fingerprint {
	// 20 bytes like sha1, spread over the key space.
	var b [20]byte
	binary.BigEndian.PutUint64(b[:], uint64(i)*0x9E3779B97F4A7C15)
	binary.BigEndian.PutUint64(b[8:], uint64(i))
	return b[:]
}

func BenchmarkIntegrationStates(b *testing.B) {
	cfg := testConfig(b)
	cfg.GetBatch = envInt("FRONTIER_BENCH_GET_BATCH", cfg.GetBatch)
	cfg.PoolSize = envInt("FRONTIER_BENCH_POOL", cfg.PoolSize)
	c := openTest(b, cfg, statesTable)
	st := c.States()
	ctx := context.Background()
	n := envInt("FRONTIER_BENCH_STATES", 1_000_000)
	const chunk = 50_000
	start := time.Now()
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		fps := make([]frontier.Fingerprint, 0, hi-lo)
		es := make([]state.Entry, 0, hi-lo)
		for i := lo; i < hi; i++ {
			fps = append(fps, benchFP(i))
			es = append(es, state.Entry{State: frontier.Crawled})
		}
		if err := st.Put(ctx, fps, es); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("preloaded %d states in %v (%.0f puts/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds())
	bloom, err := state.NewBloom(state.BloomConfig{Expected: uint64(2 * n), FPRate: 0.01}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		bloom.Add(benchFP(i))
	}
	stores := []struct {
		name string
		s    state.Store
	}{{"plain", st}, {"bloom", state.NewBloomStore(st, bloom)}}
	for _, tc := range []struct {
		name string
		hits float64
	}{{"hits", 1}, {"misses", 0}, {"hits80", 0.8}} {
		for _, sc := range stores {
			batch := envInt("FRONTIER_BENCH_STATE_BATCH", 16384)
			st := sc.s
			b.Run(fmt.Sprintf("%s/%s/batch=%d", tc.name, sc.name, batch), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, uint64(batch)))
				fps := make([]frontier.Fingerprint, batch)
				out := make([]state.Entry, batch)
				found := make([]bool, batch)
				lookups := 0
				for b.Loop() {
					for i := range fps {
						if rng.Float64() < tc.hits {
							fps[i] = benchFP(rng.IntN(n))
						} else {
							fps[i] = benchFP(n + rng.IntN(1<<40))
						}
					}
					if err := st.Get(ctx, fps, out, found); err != nil {
						b.Fatal(err)
					}
					lookups += batch
				}
				b.ReportMetric(float64(lookups)/b.Elapsed().Seconds(), "lookups/s")
			})
		}
	}
}

func benchItem(i, hosts int, rng *rand.Rand) queue.Item {
	h := i % hosts
	return queue.Item{
		Partition: 0, Host: fmt.Sprintf("host%05d.example.com", h), Fingerprint: benchFP(i),
		Score: rng.Float64(), Request: make([]byte, 200), // a feed request is about 200 B
	}
}

func BenchmarkIntegrationSchedule(b *testing.B) {
	cfg := testConfig(b)
	cfg.GetBatch = envInt("FRONTIER_BENCH_GET_BATCH", cfg.GetBatch)
	cfg.PutBatch = envInt("FRONTIER_BENCH_PUT_BATCH", cfg.PutBatch)
	c := openTest(b, cfg, queueTable)
	q := c.Queue()
	ctx := context.Background()
	for _, batch := range []int{1024, 8192} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(2, uint64(batch)))
			items := make([]queue.Item, batch)
			next, urls := 0, 0
			for b.Loop() {
				for i := range items {
					items[i] = benchItem(next, 10_000, rng)
					next++
				}
				if err := q.Schedule(ctx, items); err != nil {
					b.Fatal(err)
				}
				urls += batch
			}
			b.ReportMetric(float64(urls)/b.Elapsed().Seconds(), "URLs/s")
		})
	}
}

// BenchmarkIntegrationNext: the next batch of 1,024 from a queue of 1,000,000 rows over 10,000 hosts (one
// partition), with Frontera's default limits (128 per host, 24 hosts at least).
func BenchmarkIntegrationNext(b *testing.B) {
	cfg := testConfig(b)
	// FRONTIER_BENCH_PREFIX names tables to keep and reuse across runs (loading 1,000,000 rows takes minutes).
	keep := os.Getenv("FRONTIER_BENCH_PREFIX")
	if keep != "" {
		cfg.TablePrefix = keep
		b.Setenv("FRONTIER_TEST_KEEP_TABLES", "1")
	}
	c := openTest(b, cfg, queueTable)
	q := c.Queue()
	ctx := context.Background()
	n := envInt("FRONTIER_BENCH_QUEUE", 1_000_000)
	rng := rand.New(rand.NewPCG(3, 3))
	const chunk = 8192
	start := time.Now()
	items := make([]queue.Item, 0, chunk)
	have, err := q.Count(ctx, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("counted %d rows in %v", have, time.Since(start))
	if have >= int64(n) {
		n = 0
	}
	for i := 0; i < n; i++ {
		items = append(items, benchItem(i, 10_000, rng))
		if len(items) == chunk || i == n-1 {
			if err := q.Schedule(ctx, items); err != nil {
				b.Fatal(err)
			}
			items = items[:0]
		}
	}
	b.Logf("preloaded %d queue rows in %v (%.0f URLs/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds())
	lim := queue.Limits{Max: 1024, PerHost: 128, MinHosts: 24}
	now := time.Now().Unix()
	b.Run("next", func(b *testing.B) {
		for b.Loop() {
			got, err := q.Next(ctx, 0, now, lim)
			if err != nil || len(got) != lim.Max {
				b.Fatalf("next: %d items, %v", len(got), err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/batch")
	})
	b.Run("next+ack", func(b *testing.B) {
		if keep != "" {
			b.Skip("next+ack would drain the kept queue")
		}
		for b.Loop() {
			got, err := q.Next(ctx, 0, now, lim)
			if err != nil || len(got) != lim.Max {
				b.Fatalf("next: %d items, %v", len(got), err)
			}
			if err := q.Ack(ctx, got); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/batch")
	})
	b.Run("next/perhost=4", func(b *testing.B) {
		lim := queue.Limits{Max: 1024, PerHost: 4, MinHosts: 24}
		for b.Loop() {
			got, err := q.Next(ctx, 0, now, lim)
			if err != nil || len(got) != lim.Max {
				b.Fatalf("next: %d items, %v", len(got), err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/batch")
	})
}
