// Package crawl holds Frontier's end-to-end throughput benchmarks (issue 10). They are tests, not Go
// benchmarks, because one run is one whole crawl and what it reports is a rate, CPU-seconds per 1,000 pages and
// the peak RSS, not ns/op:
//
//   - TestStandaloneHTTP crawls the loopback web (frontiertest/web, served by a child process so that the
//     crawler's CPU and memory are its own) with the standalone mode (package standalone), and checks coverage
//     and duplicates against the web's own request log;
//   - TestCeilingHTTP crawls the same web with the least crawler that could: an in-memory seen-set, one
//     connection per host and the spider's link extractor, no frontier; the ratio of the two is the frontier's
//     cost;
//   - TestStandaloneSim crawls a generated link graph answered in-process by an http.RoundTripper with a
//     configurable latency per fetch (no sockets), which measures the frontier's own ceiling;
//   - TestSpiderInFlight shows how many fetches one spider keeps in flight against a slow web of many hosts;
//   - TestTimingWeb (issue 21) crawls a web with the real web's timing (frontiertest/web Config.Timing: per-host
//     latency from 1 ms to 500 ms, a large page on every host, pages failing once, redirects, robots rules, a
//     broken link, hosts discovered late) with Frontier's standalone mode and with the least crawler
//     (least_test.go: an in-memory seen-set, one connection per host, robots.txt obeyed, the same delay, no
//     frontier), each in a child process of its own, so that the CPU-seconds and the peak RSS are the kernel's
//     rusage of that crawler alone; the web is a third child, started afresh for each crawler.
//
// The timing bench's recorded runs (bench/results/throughput.md, "Timing web"):
//
//	go test -count=1 -timeout 60m -run TestTimingWeb -v ./bench/crawl \
//	    -crawl.timing=delay0:200x300,delay1s:1000x20 -crawl.timeout=20m
//
// delay0 is 200 hosts × 300 pages at delay 0, host latency spread from 1 ms to 500 ms, 5% of the hosts found
// late; delay1s is 1,000 hosts × 20 pages at the default 1 s delay, every host seeded and answering in 50 ms.
// Both have a 15 MiB page on every host (-crawl.timing.large), 1% of the pages failing once, 0.2% slow pages
// and 5% of the links through redirects; -crawl.timing.latency overrides the latency, -crawl.timing.crawlers
// picks the crawlers, -crawl.timing.flow=false runs Frontier without the DB worker's per-host flow control
// (db_worker.flow.enabled; a before/after on one tree), and -crawl.childprofile=cpu.prof writes a CPU profile of each crawl, the
// least crawler's too (delay0-frontier-cpu.prof, delay0-least-cpu.prof, …), for `go tool pprof`; -crawl.webprofile=web.prof profiles the web's
// serving child for each crawler (delay0-frontier-web.prof, …) and -crawl.timing.delay overrides the presets'
// delay. Frontier follows links to any host there (scope follow "any"): the late hosts are no seed's. The
// servers' log line says what each crawl made them do: connections accepted, reconnects, the large pages' bytes
// written, encoded and non-HTTP/1.1 answers, and their CPU while serving, per request.
//
// By default every test runs a small crawl (seconds), so `go test ./...` exercises them (under the race
// detector TestStandaloneSim and TestTimingWeb take smaller webs still, see race_on_test.go; deploy/test.sh runs
// this package again without -race at the defaults); flags select the
// sizes of the recorded runs (bench/results/throughput.md has the commands). No test asserts a rate: the
// figures are logged.
package crawl
