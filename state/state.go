// Package state holds the crawl state of every URL the frontier has seen (docs/architecture.md, "Stores": states): the Store
// interface that HBase and Pebble implement, Memory (a map, for tests), a bounded write-back Cache in front
// of a Store, and a Bloom filter (Bloom, BloomStore) that answers "certainly new" without a store read.
// state/statetest is the conformance suite every Store passes, with benchmark helpers.
//
// # The strategy worker's stack
//
//	cache, _ := state.NewCache(store, state.DefaultCacheConfig()) // store: pebblestore DB.States() or hbase
//	cache.Get(ctx, fps, out, found)  // hits from memory, misses in one batched store read
//	cache.Put(ctx, fps, entries)     // write-back: flushed in batches of FlushEvery
//	cache.Flush(ctx)                 // before committing Kafka offsets, and on shutdown
//	cache.Stats()                    // hits, misses, evictions, flushes: export them as metrics
//
// # Cache memory layout (why ≤ 24 bytes per URL)
//
// A general-purpose LRU (hashicorp/golang-lru) costs well over 100 bytes per entry: a map bucket, a list
// element with two pointers, the 20-byte key in its own allocation, and GC scanning of all of it. Cache
// instead keeps one open-addressing table with linear probing over four parallel arrays and no pointers
// (the garbage collector never scans it): per slot an 8-byte xxhash64 of the full fingerprint, a 4-byte
// CRC-32C of the full fingerprint as an independent check, a 4-byte revisit time (Unix seconds; values that
// do not fit go to a small side map) and one byte holding the 2-bit state and the dirty, referenced (CLOCK)
// and known-absent flags: 17 bytes. The table has MaxEntries/0.8 slots (load factor ≤ 0.8, no
// power-of-two rounding: the slot index is the high half of hash × capacity), so a full cache costs
// 17/0.8 = 21.25 B per URL; measured 21.95 B per URL at 10 million entries including the heap overhead
// (BenchmarkCacheBytesPerURL, bench/results/stores.md).
//
// The full fingerprint is not stored. Its 64-bit hash chooses the slot and identifies the entry, and a match
// is verified against the second, independent 32-bit hash: two URLs are confused only if 96 bits collide
// (about 10^-14 for a full 10-million-entry cache). Hashing the whole fingerprint matters: the
// hostname_local fingerprint starts with the host's CRC-32, so a raw 8-byte prefix would carry only 32
// bits of entropy within one host. Dirty entries keep their full fingerprint in a write log (bounded by
// FlushEvery) until flushed, because the store needs the real key.
//
// Eviction is CLOCK (second chance) over clean entries only: a dirty entry is never evicted, and when the
// table is full of dirty entries Put flushes first. Deletion uses backward shifting, so there are no
// tombstones and the probe chains stay short.
//
// # Bloom filter
//
// Bloom is a scalable Bloom filter: layers sized from a URL count and a false-positive rate (m = −n·ln p /
// ln²2 bits, k = round(m/n·ln 2)), the first for min(expected, 2^20) URLs at half the configured rate, each
// next one, added when the newest is full, for twice the URLs at half the rate, so the whole stays under the
// configured rate at any count and a small crawl does not pay for the expected count's bits (TestBloomGrowth);
// its measured rate is within 10% of theory (TestBloomFPRate); it logs a warning once the distinct insertions
// pass the design size; WriteTo/ReadBloom persist it, one checksummed record per layer. BloomStore puts it in front of a Store: a "maybe seen" always reads the store, so a false
// positive costs one read and never hides a URL. The Pebble store saves and reloads the filter with the
// database (see pebblestore).
//
// It imports only the frontier package, the standard library and xxhash; the HBase and Pebble
// implementations live elsewhere and import this package, not the reverse. No metrics library: the
// counters are plain (Cache.Stats, BloomStore's atomic fields) for the worker to export.
package state

import (
	"context"

	"github.com/frontiercrawl/frontier"
)

// Entry is the stored state of one URL.
type Entry struct {
	State frontier.State
	// RevisitAt is when a revisit policy wants the URL fetched again, in Unix seconds; 0 means never.
	RevisitAt int64
}

// Store maps fingerprints to entries. Implementations are safe for concurrent use.
//
// Get fills out[i] with the entry of fps[i] and found[i] with whether it exists; a missing fingerprint gets
// the zero Entry (NotCrawled) and found[i] = false. out and found must be at least as long as fps.
//
// Put writes entries[i] under fps[i]; it is atomic per key, not per batch, and when a fingerprint appears
// twice in one batch the later entry wins. It rejects (with an error, storing nothing) an empty fingerprint,
// an invalid State, or fewer entries than fingerprints (see CheckPut). Once Put returns nil the entries are
// durable as the implementation defines it (HBase: acknowledged by the region servers; Pebble: in the synced
// WAL).
//
// The conformance suite is state/statetest.
type Store interface {
	Get(ctx context.Context, fps []frontier.Fingerprint, out []Entry, found []bool) error
	Put(ctx context.Context, fps []frontier.Fingerprint, entries []Entry) error
}
