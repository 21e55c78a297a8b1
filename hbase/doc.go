// Package hbase implements Frontier's stores on Apache HBase (docs/architecture.md, "Stores"): state.Store
// (States), queue.Queue (Queue), metadata.Store (Pages) and metadata.Domains (Domains), plus the schema step
// (EnsureSchema) and a readiness probe (Probe, behind frontierctl probe hbase). It talks to HBase through the
// HBase Thrift2 gateway (org.apache.hadoop.hbase.thrift2.ThriftServer, the protocol Frontera's HBase backend
// used), because the native Go client (gohbase) is not available from the module proxy. Bindings are generated
// into internal/thrift2.
//
// It imports frontier, queue, state and metadata, and no higher level (internal/archtest enforces the levels).
//
// # Use
//
//	cfg := hbase.DefaultConfig()        // 127.0.0.1:9090, framed transport, binary protocol, prefix "frontier_"
//	if err := hbase.EnsureSchema(ctx, cfg); err != nil { … }   // or: frontierctl hbase-schema
//	c, err := hbase.New(ctx, cfg, logger, prometheus.DefaultRegisterer)
//	defer c.Close()
//	states, q, pages, domains := c.States(), c.Queue(), c.Pages(), c.Domains()
//
// Transport and protocol must match the gateway's flags: deploy/up starts it framed (-f) with the binary
// protocol, as Frontera's HBASE_USE_FRAMED_COMPACT setups did; the gateway's own default is buffered.
//
// # Client
//
// A Thrift client serves one call at a time, so Client keeps a pool of up to Config.PoolSize connections and
// large reads and writes are split into chunks (Config.GetBatch, Config.PutBatch) that run on several
// connections at once. A call that fails with a transport error (gateway down or restarting, connection reset)
// or with an HBase exception that clears up by itself (NotServingRegion, RegionMoved, RegionOpening,
// ServerNotRunningYet, RegionTooBusy, …) is retried on a fresh connection with jittered exponential backoff,
// by default until the caller's context ends (Config.Retries = -1), so an HBase restart of any length is waited
// out: the first failure logs "waiting for HBase", the first success after it logs how long the wait was (also
// in frontier_hbase_wait_seconds_total), and Client.Unreachable reports the outage to a readiness probe. New
// waits up to Config.StartupWait for a gateway that is not up yet. ctx cancellation interrupts a call in flight
// (the connection is then discarded). Every error is an *Error naming the RPC, the table and the gateway
// address; IsRetryable classifies it. A missing table and an address that does not speak Thrift (an HTTP port
// answers with the frame size 1213486160) are not retried, and their errors name the fix.
// Every call the stores make is idempotent, so every call is retried this way, counters included (below).
//
// # Schema
//
// Four tables, named <namespace>:<table_prefix><name> (or <table_prefix><name> in the default namespace).
// EnsureSchema creates the namespace if one is configured (Thrift2 can; gohbase could not) and any missing
// table; existing tables are left alone, so it is idempotent and safe to run concurrently. Every column family
// keeps one version (the stores never read history), uses a ROW bloom filter (point gets dominate except for
// queue scans, and the queue's index lookups are gets), FAST_DIFF block encoding (row keys share long prefixes),
// and one-letter names (HBase repeats the family and qualifier in every cell).
//
//	table            family  row key                         columns
//	states           s       fingerprint (raw bytes)         s:s = state byte [+ revisit time, int64 BE]
//	queue            q       see below                       q:v = score (float64 bits) | not-before (int64) | request
//	                         0xFFFF | fingerprint            q:k = the fingerprint's current queue row key
//	metadata         m       fingerprint (raw bytes)         m:u url, m:f first seen, m:l last fetched, m:s status,
//	                                                         m:d depth, m:c content type, m:e error, m:r redirect fp
//	domain_metadata  m       domain (UTF-8)                  m:<counter> = 8-byte BE counter, m:<counter>\x00v =
//	                                                         its version, m:<counter>\x00s\x00<source> = the
//	                                                         highest Seq applied from source (see below)
//
// states is in-memory (the block cache keeps it preferentially): the strategy worker reads it for every link.
// Its key is the raw fingerprint, not Frontera's hex, halving the key; sha1 fingerprints spread writes
// evenly over regions and hostname_local fingerprints keep a host's rows together, as Frontera intended.
//
// Tables are created with one region: the Thrift2 gateway of HBase 2.6.1 hands createTable's split keys to
// HBase as views of the whole request frame ("All split keys must be unique, found duplicate: \x80\x01…"), so
// pre-splitting through the gateway is impossible; HBase splits regions as they grow, and an operator can
// pre-split with the HBase shell before the first start if the load calls for it.
//
// # Queue row keys
//
//		partition (uint16 BE) | inverted score bucket (uint16 BE) | host | 0x00 | fingerprint
//
//	  - One row per URL: the key is a function of the item, so a replayed Schedule overwrites the same row
//	    (Frontera #87 came from one row per batch holding many URLs).
//	  - partition first: a spider partition's rows are one contiguous key range, so Next is a range scan of that
//	    prefix with a row limit, never a full-table scan (Frontera #227).
//	  - inverted score bucket next: bucket = floor((1 − score) × Config.ScoreBuckets), so the range scan meets
//	    the best scores first and stops as soon as the batch is full.
//	  - host next: inside one bucket a host's rows are contiguous and hosts follow one another, so a batch
//	    spreads over hosts; when a host reaches its per-host cap, Next seeks past the rest of that host's rows in
//	    the bucket (start key host+0x01) instead of reading them. Host names never contain 0x00, the separator.
//	  - fingerprint last: unique, and recoverable from the key, so the scan reads one cell per row.
//
// The index row 0xFFFF|fingerprint (in the same table, past every partition; so partitions are limited to
// 0..65534) records the fingerprint's current row key (q:k) and the key that one replaced (q:p). Schedule costs
// three round trips whatever the batch size: one multi-get of the index rows, one putMultiple of the queue rows
// and of the index rows that change, and one deleteMultiple of the replaced rows (a re-schedule with another
// score, host or partition). If a crash cuts Schedule between its puts and its deletes, the old row survives,
// but the replayed batch (the caller commits its Kafka offset only after Schedule returned) finds it in q:p and
// deletes it; until then, a batch never holds two rows of one fingerprint. Ack is one deleteMultiple of the
// items' own rows (rebuilt from the items) and reads nothing; index rows are kept (one small row per URL ever
// queued) and simply point at a deleted row after an Ack. Schedule and Ack calls on one Queue that touch the
// same fingerprints are serialised (striped locks), so concurrent writers in one process never leave two rows
// for one URL. Two
// processes scheduling the same URL at the same instant can (Frontier routes a host's URLs through one
// consumer, so this does not happen in a correct deployment); the URL is then served once per row.
//
// Next does not read the index: checking every returned row against it (one random get per row) cost six times
// the scan itself on this machine (125 ms against 19 ms for 1,024 rows), for a case the design excludes.
//
// Next never deletes what it returns: rows are deleted only by Ack, after the caller has delivered the batch
// (Frontera deleted before sending, so a crash lost the batch). Rows a per-host cap skipped are not touched and
// come back in a later batch (Frontera #393 deleted them with the row that held them). Items whose not-before
// time is in the future are skipped at read time, on the client: a server-side filter (SingleColumnValueFilter
// over Thrift) would not shorten the scan, since the region server must still read every row the filter
// rejects, and over a limited range scan it turns "read N rows" into "read until N rows pass", an unbounded
// scan (Frontera commented its crawl_at filter out for that reason, and ignored crawl_at). A not-yet-due row
// costs one skipped row per Next; Config.ScanMaxRows bounds the rows one Next reads.
//
// MinHosts: once Max items are taken, Next keeps scanning for rows of hosts it does not have yet while fewer than
// MinHosts hosts are represented; each such row replaces the last-taken item of the host that has the most
// items. Count is a key-only scan of the partition, meant for stats lines, not hot paths.
//
// # Metadata and domains
//
// Pages.Put writes only the non-zero fields of a page, so HBase's cell merge gives "unknown never overwrites
// known"; first-seen is written only where the row has none (one multi-get per batch).
//
// Domains keeps counters exact across retries and replays, with a check-and-put per row instead of an HBase
// increment. A write names where its counts come from (metadata.Tally: the consumed partition as Source, the
// offset as Seq); the row keeps, next to the counter, a version and the highest Seq applied per source. A write
// reads the three (one get), drops the tallies at or below their source's mark, and puts the new value, the
// version + 1 and the new marks with checkAndMutate conditioned on the version it read; a lost race reads again.
// Why this and not the alternatives:
//   - An increment is not idempotent: retried after a lost answer it counts twice, and not retried (as before)
//     it returns the error that made both DB workers and a strategy worker exit on an HBase restart.
//   - The conditional put is idempotent: if it applied and its answer was lost, the retry's check fails (the
//     version moved) and the next read finds the marks, so it is retried through an outage like every other
//     call. The same marks make a replay exact: a batch replayed after a crash between the counter write and the
//     offset commit finds its offsets marked, however the replay cuts the batches (the DB worker tags each
//     event with its own offset).
//   - Puts of per-batch deltas keyed by batch id would be idempotent too, but a batch replayed after a crash is
//     cut differently (its id changes), every read would sum the deltas, and old deltas need a compaction that
//     is itself a read-modify-write. Counts derived from the states on replay would need a scan.
//
// The cost: one round trip per row written, like an increment, when the writing Domains wrote the row last (it
// keeps the row's counter, version and marks from its last write and conditions the check-and-put on that
// version; the usual case, since a strategy worker owns its hosts' rows); two (a get, then the check-and-put)
// for a row it has not seen or that another process writes too (a failed cached check marks the row, which is
// then read before each write). BenchmarkIntegrationCounterWrite (bench/results/hbase.md) measures both.
// Contention between processes writing one row counts in frontier_hbase_counter_conflicts_total; within a
// process, writes to a row take turns. The marks are a few
// columns per row (one per spider-log partition that counted into it; one per process for plain Add, whose
// Seq is a per-process call number). A row an increment wrote (no version column) is taken over as is.
//
// # Tests
//
// Unit tests run the stores against an in-memory fake of the Thrift2 service (fake_test.go). Integration tests
// (build tag integration) run the conformance suites and the benchmarks against the HBase that deploy/up
// starts; they read FRONTIER_TEST_HBASE (host:port), FRONTIER_TEST_HBASE_TRANSPORT and
// FRONTIER_TEST_HBASE_PROTOCOL (export $(deploy/env)), skip when it is unset, and fail when CI=true. Each test
// uses tables under its own prefix and drops them at the end (FRONTIER_TEST_KEEP_TABLES=1 keeps them).
// TestIntegrationCutConnection walks every write path through a TCP proxy it cuts before a call and after a
// write reached HBase but before its answer came back, and checks that no error reaches the caller and that
// counters are exact. Benchmarks (BenchmarkIntegration*) and the CPU-per-operation probe are described in bench/results/hbase.md;
// TestIntegrationHBaseRestart restarts the shared HBase with deploy/down and deploy/up and so runs only with
// FRONTIER_TEST_HBASE_RESTART=1.
package hbase
