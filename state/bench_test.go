package state_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/state/statetest"
)

// go test -run XXX -bench BenchmarkMemoryGet ./state/
func BenchmarkMemoryGet(b *testing.B) {
	statetest.Bench(b, func(b *testing.B) state.Store { return state.NewMemory() }, 1_000_000, nil)
}

// go test -run XXX -bench BenchmarkCacheGet ./state/
// Lookups through the Cache (1M entries, all resident) over a memory store.
func BenchmarkCacheGet(b *testing.B) {
	statetest.Bench(b, func(b *testing.B) state.Store {
		c, err := state.NewCache(state.NewMemory(), state.CacheConfig{MaxEntries: 2_000_000, FlushEvery: 15_000})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}, 1_000_000, func(b *testing.B, s state.Store) {
		if err := s.(*state.Cache).Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
}

type nopStore struct{}

func (nopStore) Get(_ context.Context, fps []frontier.Fingerprint, out []state.Entry, found []bool) error {
	for i := range fps {
		out[i], found[i] = state.Entry{}, false
	}
	return nil
}
func (nopStore) Put(context.Context, []frontier.Fingerprint, []state.Entry) error { return nil }

// go test -run XXX -bench BenchmarkCacheBytesPerURL -benchtime 1x ./state/
// Fills a cache of 10 million entries (each with a revisit time) and reports the heap it holds per URL,
// measured with runtime.ReadMemStats after GC, table and bookkeeping included.
func BenchmarkCacheBytesPerURL(b *testing.B) {
	const n = 10_000_000
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, err := state.NewCache(nopStore{}, state.CacheConfig{MaxEntries: n, FlushEvery: 65_536})
		if err != nil {
			b.Fatal(err)
		}
		const batch = 4096
		fps := make([]frontier.Fingerprint, batch)
		buf := make([]byte, batch*20)
		es := make([]state.Entry, batch)
		for lo := 0; lo < n; lo += batch {
			for i := range batch {
				fp := buf[i*20 : i*20+20 : i*20+20]
				id := uint64(lo + i)
				for j := range 20 {
					fp[j] = byte((id*0x9e3779b97f4a7c15)>>(8*(j%8)) ^ uint64(j))
				}
				fps[i] = fp
				es[i] = state.Entry{State: frontier.Crawled, RevisitAt: 1_700_000_000 + int64(id)}
			}
			if err := c.Put(context.Background(), fps, es); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		st := c.Stats()
		if st.Len != n {
			b.Fatalf("cache holds %d entries, want %d", st.Len, n)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/URL")
		b.ReportMetric(float64(c.TableBytes())/n, "table-B/URL")
		runtime.KeepAlive(c)
		runtime.KeepAlive(buf)
	}
}

// go test -run XXX -bench BenchmarkCachePastBound ./state/
// Gets of new fingerprints through a Cache full to its bound of 200,000 (each one read from the store and
// cached by evicting another): the path a strategy worker takes once its crawl outgrows the cache. Reports
// ns per fingerprint.
func BenchmarkCachePastBound(b *testing.B) {
	const bound, batch = 200_000, 1000
	c, err := state.NewCache(nopStore{}, state.CacheConfig{MaxEntries: bound, FlushEvery: 15_000})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	fps := make([]frontier.Fingerprint, batch)
	out, found := make([]state.Entry, batch), make([]bool, batch)
	next := 0
	fill := func() {
		for i := range fps {
			fps[i] = frontier.Fingerprint{byte(next >> 24), byte(next >> 16), byte(next >> 8), byte(next), 0x5A}
			next++
		}
		if err := c.Get(ctx, fps, out, found); err != nil {
			b.Fatal(err)
		}
	}
	for range 2 * bound / batch { // full, and a bound's worth of evictions already behind
		fill()
	}
	n := 0
	for b.Loop() {
		fill()
		n += batch
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/fingerprint")
}

// BenchmarkCachePutFlush is the strategy worker's write side: a batch's changed states put (1,000 fingerprints,
// 20 bytes as the spiders' SHA-1, half of them new to the cache) and flushed, as at the end of every batch.
//
//	go test -run XXX -bench BenchmarkCachePutFlush -benchmem ./state/
func BenchmarkCachePutFlush(b *testing.B) {
	const batch = 1000
	c, err := state.NewCache(nopStore{}, state.CacheConfig{MaxEntries: 3_000_000, FlushEvery: 15_000})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	fps := make([]frontier.Fingerprint, batch)
	entries := make([]state.Entry, batch)
	for i := range entries {
		entries[i] = state.Entry{State: frontier.Queued}
	}
	next, n := 0, 0
	cpu0 := cputime.Process()
	for b.Loop() {
		for i := range fps {
			k := next + i
			if i%2 == 1 {
				k = next/2 + i // seen in an earlier batch
			}
			fps[i] = frontier.Fingerprint{byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k), 0x5A, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
		}
		next += batch
		if err := c.Put(ctx, fps, entries); err != nil {
			b.Fatal(err)
		}
		if err := c.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		n += batch
	}
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/fingerprint")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/fingerprint") // GC included
}
