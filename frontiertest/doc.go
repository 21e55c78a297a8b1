// Package frontiertest holds helpers for Frontier's tests: a slog logger that writes to the test log, and (in
// frontiertest/web) a synthetic multi-host website that end-to-end crawls are checked against.
//
// Import it only from _test.go files and benchmarks. It imports no other Frontier package, so any package's
// tests may use it.
package frontiertest
