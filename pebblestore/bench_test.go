package pebblestore_test

import (
	"context"
	"flag"
	"testing"

	"github.com/frontiercrawl/frontier/pebblestore"
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

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
