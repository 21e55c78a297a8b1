// Package crawl holds Frontier's end-to-end throughput benchmarks (issue 10). They are tests, not Go
// benchmarks, because one run is one whole crawl and what it reports is a rate, CPU-seconds per 1,000 pages and
// the peak RSS, not ns/op:
//
//   - TestStandaloneHTTP crawls the loopback web (frontiertest/web, served by a child process so that the
//     crawler's CPU and memory are its own) with the standalone mode (package embedded), and checks coverage
//     and duplicates against the web's own request log;
//   - TestCeilingHTTP crawls the same web with the least crawler that could: an in-memory seen-set, one
//     connection per host and the spider's link extractor, no frontier; the ratio of the two is the frontier's
//     cost;
//   - TestStandaloneSim crawls a generated link graph answered in-process by an http.RoundTripper with a
//     configurable latency per fetch (no sockets), which measures the frontier's own ceiling;
//   - TestSpiderInFlight shows how many fetches one spider keeps in flight against a slow web of many hosts.
//
// By default every test runs a small crawl (seconds), so `go test ./...` exercises them; flags select the
// sizes of the recorded runs (bench/results/throughput.md has the commands). No test asserts a rate: the
// figures are logged.
package crawl
