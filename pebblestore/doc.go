// Package pebblestore implements Frontier's stores on Pebble (github.com/cockroachdb/pebble/v2), the
// embedded LSM key-value store, for standalone mode: state.Store (States), queue.Queue (Queue),
// metadata.Store (Pages) and metadata.Domains (Domains), all in one Pebble database, with the same semantics
// as the HBase implementation (both pass state/statetest, queue/queuetest and metadata/metadatatest).
//
// # Usage
//
//	cfg := pebblestore.DefaultConfig()
//	cfg.Dir = "/var/lib/frontier/store"
//	db, err := pebblestore.Open(cfg, logger)
//	...
//	defer db.Close() // saves the Bloom filter; call it on shutdown
//	states, q := db.States(), db.Queue()
//
// Every write is one Pebble batch, committed with a WAL fsync when Config.Sync is true (the default), so what
// a call returned nil for survives kill -9 and a crash; the DB worker commits its Kafka offsets after that.
//
// # Durability
//
// With Config.DeferSync (standalone mode sets it) the batches are committed without an fsync of their own:
// what a call returned nil for is durable once the next synced write to the same database returns. That is
// enough wherever every party that relies on the write keeps its own records in the same database: Pebble
// writes every batch to one WAL in commit order, an fsync makes the whole WAL written so far durable, and
// recovery (after kill -9 or a power loss) replays a prefix of it, so a state found after a crash is one the
// process passed through. In standalone mode the workers' offsets, queue rows, states and pages all live here
// (bus/pebblebus); the synced writes are the spiders', whose journals and WARC files outside the database
// depend on what they report (docs/reliability.md). Per round of the loop that is one fsync per spider report
// batch and feed commit instead of one per write of every role (issue 21: the WAL's fdatasync was 17–28% of the
// CPU of a slow crawl). bus/pebblebus BenchmarkRound measures both ways.
//
// # Key layout
//
// One keyspace, a one-byte prefix per table, integers big-endian so that byte order is numeric order:
//
//	s | fingerprint                                  → state byte [+ revisit time int64]     (states)
//	q | partition u32 | bucket u16 | host | 0 | fp   → queue value                           (ready queue rows)
//	w | partition u32 | not_before u64 | fp          → queue value                           (delayed queue rows)
//	i | fingerprint                                  → the q… or w… key of the URL's row     (queue index)
//	c | partition u32                                → int64 row count                       (queue counts)
//	m | fingerprint                                  → page record                           (metadata)
//	d | counter name | 0 | domain                    → int64                                 (domain counters)
//	k | counter name | 0 | domain | 0 | source       → int64, highest Seq applied            (AddOnce marks)
//	z | "bloom-clean"                                → present only between a clean Close and the next Open
//	B …                                              → not the store's: standalone mode's streams (bus/pebblebus)
//
// Queue value: score float64 bits, not_before int64, uvarint host length, host, then the request bytes.
//
// Why this layout:
//   - q rows sort by partition, then best score first: bucket = buckets−1−⌊score·buckets⌋ (Config.ScoreBuckets,
//     default 1000, the same resolution as HBase), so Next for one partition is one forward range scan from
//     the partition's first key, and scores in one bucket are equals. Within a bucket rows are grouped by host,
//     so when a host reaches its per-host cap (or, once the batch is full, when only new hosts can help the
//     minimum host count) the scan seeks past the host's group with one SeekGE instead of reading its rows.
//     Skipped rows are never touched, so a cap loses nothing (Frontera #393) and one partition's scan does not
//     read other partitions' rows (#227).
//   - Items due later (not_before in the future) wait in w rows, sorted by due time, so they cost nothing to a
//     scan for due items. Next first moves the w rows that have fallen due into q (one batch), then scans q.
//     A q row still carries its not_before and is skipped if not due, so even a Next with an older now than a
//     previous call never returns an item early (Frontera ignored crawl_at).
//   - The i index maps a fingerprint to its one row, so Schedule replaces the row of a URL scheduled again
//     (new score, partition or due time) instead of adding a duplicate (Frontera #87), and Ack finds the row
//     from the fingerprint alone. Next never deletes; Ack deletes after the batch is delivered (Frontera deleted
//     before sending).
//   - Counts are kept per partition in c keys written in the same batch as the rows, so Count is exact after a
//     crash and costs no scan.
//   - Acknowledged rows leave deletion tombstones at the head of a partition until compaction drops them;
//     Next remembers per partition where the first live row was (lowered by every write before it) and
//     starts its scan there, so it does not wade through them. The same holds at the head of every host's
//     group (the rows taken from that host): Next remembers where each of its seeks past a group landed and
//     the next Next seeks straight there unless a row was written in between (skipMemo in queue.go), which
//     halves Next's CPU on the fast web's shape (BenchmarkQueueNextTombstones).
//   - An in-memory Bloom filter over the fingerprints ever indexed (rebuilt at Open from the i keys) lets
//     Schedule skip the index read for a URL that was never queued, the common case.
//   - Writes that read before they write (Schedule, Ack, the w→q move in Next, Domains.Add) hold one mutex per
//     table; reads (States.Get, Pages.Get, Domains.Get, Count) take no lock.
//
// # Bloom filter
//
// With Config.Bloom.Expected > 0, States() is a state.BloomStore: lookups of URLs the filter has never seen
// skip Pebble. The filter must hold every stored fingerprint, so it is persisted like this: Close writes it to
// states.bloom (temporary file, fsync, rename) and then sets the z bloom-clean key; Open loads the file only
// if that key is present (and the file's design matches Config.Bloom), and deletes the key (synced) before
// returning. After a crash the key is absent, and Open rebuilds the filter by scanning the states (it logs how
// long that took), so a crash can cost time but never a wrongly "new" URL.
//
// # Page records
//
// Pages.Put reads each record before it writes the merged one, but for a page it knows is not stored: an
// in-memory Bloom filter over the page keys stored (pagefilter.go, a keyfilter; loaded by a scan of the m keys at the first
// Put, then kept by Put, their only writer) answers for the new links without a Pebble lookup. It is bounded
// at 16 MiB, outside the standalone's memory plan (about 8.4 million pages); past it every page is read. Nor
// does it read a record it wrote or read lately: it keeps them in a cache of two generations, at most 16 MiB
// in all, also outside the memory plan (the links role records the same links again and again).
// A Pebble merge operator would spare the read (Put writing each page as a merge operand, Pebble folding the operands on reads, flushes and compactions by
// the same rule as metadata.Merge, which is associative); merge_test.go keeps that design, its record merge
// is tested against the read-modify-write's (TestMergeOperatorAssociative, FuzzMergedPage,
// TestPutMergeLikeMemory), and BenchmarkPagesPut measures both: the operands cost about a quarter less CPU
// per page there, flushes and compactions included. It is not used, because it cannot be had safely as is:
//   - it writes every link seen again, where the read lets Put skip a record its merge leaves unchanged
//     (TestPagesPutUnchangedWritesNothing), so the WAL, the memtable and the compactions carry every link;
//   - Pebble stores the merger's name in the OPTIONS file and Open fails on another name, both ways ("pebble:
//     merger name from file ... != merger name from options ...", TestMergerNameMismatchFailsOpen; only a
//     file saying "nullptr", RocksDB's, is let through): every existing data directory (created with Pebble's
//     default merger, "pebble.concatenate") would need a migration, and a database written with the operator
//     could not be opened by an older build, which fails at Open with that message (clearly, not later).
//
// Figures: BENCHMARKS.md, "The DB worker's and the standalone bus's side".
//
// # Tuning
//
// Config.CacheBytes is the block cache; Pebble reserves its memtables from it, so the memtable is 1/8 of it
// (at most 32 MiB) unless Config.MemTableBytes says otherwise, and the store's memory outside the Go heap
// stays about CacheBytes. A smaller memtable means more flushes and more compaction CPU (BENCHMARKS.md,
// "URLFrontier service": a 16 MiB memtable instead of 8 MiB took a quarter off the gateway's CPU per URL).
// States.Get sorts a batch of 64 or more fingerprints and walks one iterator forward; Pages.Put and Queue.Ack
// do the same from 16 keys (seek.go), since a Get builds an iterator over every level for its one key, and
// Pages.Put does not rewrite a record its merge leaves unchanged (a link seen again). Pages.Put's iterator
// seeks by prefix, so that the tables' Bloom filters answer for the new links no table holds, L6's too
// (IterOptions.UseL6Filters: a small database keeps every compacted table there).
// Benchmarks: BenchmarkStatesGet, BenchmarkQueueSchedule, BenchmarkQueueNext, BenchmarkQueueNextTombstones, BenchmarkPagesPut (flags -bench.stored,
// -bench.rows, -bench.sync after the package path); figures in bench/results/stores.md.
//
// It imports frontier, state, queue, metadata, Pebble and the standard library.
package pebblestore
