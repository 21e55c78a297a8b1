// Package frontiertest holds helpers for Frontier's tests: a slog logger that writes to the test log (Logger),
// CheckWARC, which validates WARC files with Python's warcio (oracle/check_warc.py) and returns what it read,
// and (in frontiertest/web) a synthetic multi-host website that end-to-end crawls are checked against.
//
// CheckAccounting (accounting.go) is the end-of-crawl invariant every end-to-end crawl test runs: every URL
// the frontier scheduled is crawled, in an error state with its reason, or still queued; it reads the
// states, queue and page-metadata stores of either family (pebblestore for the standalone, hbase for the
// cluster).
//
// frontiertest/cluster is the one harness for tests that run a cluster over Kafka and HBase: per-run topics
// and tables, the roles in process or as binaries under one process supervisor, the idle wait and the
// end-of-crawl check.
//
// Import it only from _test.go files and benchmarks. It imports no other Frontier package but the model
// ones (frontier, state, metadata), which import no test helper, so any package's tests may use it.
package frontiertest
