package pebblestore_test

import (
	"context"
	"crypto/sha1"
	"flag"
	"strconv"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/state/statetest"
)

var (
	benchStored = flag.Int("bench.stored", 1_000_000, "states stored before the lookup benchmarks")
	benchRows   = flag.Int("bench.rows", 1_000_000, "queue rows before the Next benchmark")
	benchSync   = flag.Bool("bench.sync", true, "fsync the WAL on every write in the benchmarks")
)

// openBench opens a store in a temporary directory on the real file system.
func openBench(b *testing.B, bloom bool) *pebblestore.DB {
	cfg := pebblestore.DefaultConfig()
	cfg.Dir = b.TempDir()
	cfg.Sync = *benchSync
	cfg.Bloom = state.BloomConfig{}
	if bloom {
		cfg.Bloom = state.BloomConfig{Expected: uint64(*benchStored) * 2, FPRate: 0.01}
	}
	db, err := pebblestore.Open(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// go test -run XXX -bench BenchmarkStatesGet -benchtime 3s ./pebblestore/
func BenchmarkStatesGet(b *testing.B) {
	for _, bloom := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "bloom"}[bloom], func(b *testing.B) {
			var db *pebblestore.DB
			statetest.Bench(b, func(b *testing.B) state.Store { db = openBench(b, bloom); return db.States() },
				*benchStored, func(b *testing.B, _ state.Store) { settle(b, db) })
		})
	}
}

// settle flushes the memtable, compacts everything and reads it once (warming the block cache): the
// steady state of a long crawl's store whose working set fits the cache.
func settle(b *testing.B, db *pebblestore.DB) {
	if err := db.Pebble().Flush(); err != nil {
		b.Fatal(err)
	}
	if err := db.Pebble().Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
		b.Fatal(err)
	}
	it, err := db.Pebble().NewIter(nil)
	if err != nil {
		b.Fatal(err)
	}
	for it.First(); it.Valid(); it.Next() {
	}
	if err := it.Close(); err != nil {
		b.Fatal(err)
	}
}

// go test -run XXX -bench BenchmarkQueueSchedule ./pebblestore/
func BenchmarkQueueSchedule(b *testing.B) {
	for _, batch := range []int{1024, 8192} {
		b.Run("batch="+itoa(batch), func(b *testing.B) { queuetest.BenchSchedule(b, openBench(b, false).Queue(), batch) })
	}
}

// go test -run XXX -bench BenchmarkQueueNext ./pebblestore/
func BenchmarkQueueNext(b *testing.B) {
	b.Run("peek", func(b *testing.B) { queuetest.BenchNext(b, openBench(b, false).Queue(), *benchRows, 10_000, false) })
	b.Run("ack", func(b *testing.B) { queuetest.BenchNext(b, openBench(b, false).Queue(), *benchRows, 10_000, true) })
}

// BenchmarkQueueNextFlow is Next as the DB worker's flow calls it on the fast web (queuetest.BenchNextFlow):
// 200 hosts of 300 rows of one score, room at one host in 10.
//
//	go test -run XXX -bench BenchmarkQueueNextFlow ./pebblestore/
func BenchmarkQueueNextFlow(b *testing.B) {
	queuetest.BenchNextFlow(b, openBench(b, false).Queue(), 200, 300, 10)
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// go test -run XXX -bench BenchmarkPagesPut ./pebblestore/
//
// The DB worker's links role: batches of 512 page records into a store already holding -bench.stored/10
// pages. "new": 80% of each batch new links (URL and first seen only), 20% outcomes of pages stored before.
// "reseen": the fast web's shape, where most links point at pages recorded before: 70% links recorded before
// (unchanged), 15% new links, 15% outcomes. Each shape runs with the read-modify-write Put ("read") and with
// Pebble merge operands ("merge", the DB opened with the page merge operator); the flush and the compactions
// that fold the operands run in Pebble's goroutines and are counted in the process CPU, and the benchmark
// flushes and compacts at its end (inside the timed CPU) so that the merges it deferred are paid.
func BenchmarkPagesPut(b *testing.B) {
	for _, shape := range []string{"new", "reseen"} {
		for _, mode := range []string{"read", "merge"} {
			b.Run(shape+"/"+mode, func(b *testing.B) {
				pebblestore.SetPageMerger(mode == "merge")
				defer pebblestore.SetPageMerger(false)
				benchPagesPut(b, shape == "reseen", mode == "merge")
			})
		}
	}
}

func benchPagesPut(b *testing.B, reseen, merge bool) {
	const batch = 512
	stored := *benchStored / 10
	db := openBench(b, false)
	pages := db.Pages()
	put := pages.Put
	if merge {
		put = func(ctx context.Context, ps []metadata.Page) error { return pebblestore.PutMerge(pages, ctx, ps) }
	}
	ctx := context.Background()
	page := func(i int) metadata.Page {
		fp := sha1.Sum([]byte("page-" + strconv.Itoa(i)))
		return metadata.Page{Fingerprint: fp[:], URL: "https://host" + strconv.Itoa(i%1000) + ".example.com/p/" + strconv.Itoa(i) + ".html", FirstSeen: 1_700_000_000}
	}
	for i := 0; i < stored; i += batch {
		ps := make([]metadata.Page, 0, batch)
		for j := i; j < min(i+batch, stored); j++ {
			ps = append(ps, page(j))
		}
		if err := pages.Put(ctx, ps); err != nil {
			b.Fatal(err)
		}
	}
	settle(b, db)
	next := stored
	ps := make([]metadata.Page, batch)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for n := 0; b.Loop(); n++ {
		for j := range ps {
			old := page((n*batch + j*7919) % stored)
			switch {
			case !reseen && j%5 == 0, reseen && j%20 < 3: // an outcome of a page stored before
				old.URL, old.LastFetched, old.Status, old.ContentType = "", 1_700_000_100, 200, "text/html"
				ps[j] = old
			case reseen && j%20 < 17: // a link recorded before
				old.FirstSeen = 1_700_000_200
				ps[j] = old
			default:
				ps[j] = page(next)
				next++
			}
		}
		if err := put(ctx, ps); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Pebble().Flush(); err != nil {
		b.Fatal(err)
	}
	if err := db.Pebble().Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
		b.Fatal(err)
	}
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*batch), "cpu-ns/page")
}

// go test -run XXX -bench BenchmarkQueueNextTombstones ./pebblestore/
//
// The fast web's shape (issue 21): one partition, 200 hosts with 300 rows each over three score buckets, and
// a Next (Max 8,192, each host capped at one request, as the flow's caps are once a host's queue at the
// spider is full) then Ack per round, so each round takes the first live row of every host and seeks past the
// rest of its groups, and the rows taken in earlier rounds lie as deletion tombstones at the head of every
// group (the rows were flushed to a table before the first round; the tombstones stay in the memtable).
// Reports the CPU of Next and of Ack per row taken.
func BenchmarkQueueNextTombstones(b *testing.B) {
	const hosts, perHost = 200, 300
	db := openBench(b, false)
	q := db.Queue()
	ctx := context.Background()
	fill := func() {
		items := make([]queue.Item, 0, hosts*perHost)
		for h := range hosts {
			for i := range perHost {
				fp := sha1.Sum([]byte("row-" + strconv.Itoa(h) + "-" + strconv.Itoa(i)))
				host := "host" + strconv.Itoa(h) + ".example.com"
				items = append(items, queue.Item{Host: host, Fingerprint: fp[:], Score: []float64{0.9, 0.5, 0.2}[i%3],
					Request: []byte("\x94\xd9\x2ehttps://" + host + "/page/" + strconv.Itoa(i) + ".html\xa3GET\x80\x80")})
			}
		}
		if err := q.Schedule(ctx, items); err != nil {
			b.Fatal(err)
		}
		if err := db.Pebble().Flush(); err != nil {
			b.Fatal(err)
		}
	}
	fill()
	lim := queue.Limits{Max: 8192, MinHosts: 24, HostCap: func(string) int { return 1 }}
	var nextCPU, ackCPU time.Duration
	taken := 0
	b.ResetTimer()
	for b.Loop() {
		c0 := cputime.Process()
		items, err := q.Next(ctx, 0, 1, lim)
		if err != nil {
			b.Fatal(err)
		}
		c1 := cputime.Process()
		if err := q.Ack(ctx, items); err != nil {
			b.Fatal(err)
		}
		nextCPU += c1 - c0
		ackCPU += cputime.Process() - c1
		taken += len(items)
		if len(items) < hosts {
			b.StopTimer()
			fill()
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(nextCPU.Nanoseconds())/float64(taken), "next-cpu-ns/row")
	b.ReportMetric(float64(ackCPU.Nanoseconds())/float64(taken), "ack-cpu-ns/row")
	b.ReportMetric(float64(taken)/float64(b.N), "rows/next")
}
