// Package frontiertest holds helpers for Frontier's tests: a slog logger that writes to the test log (Logger),
// CheckWARC, which validates WARC files with Python's warcio (oracle/check_warc.py) and returns what it read,
// and (in frontiertest/web) a synthetic multi-host website that end-to-end crawls are checked against.
//
// Import it only from _test.go files and benchmarks. It imports no other Frontier package, so any package's
// tests may use it.
package frontiertest
