package pebblestore_test

import (
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
			statetest.Bench(b, func(b *testing.B) state.Store { return openBench(b, bloom).States() }, *benchStored)
		})
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
