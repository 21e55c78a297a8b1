// Package e2e holds Frontier's end-to-end tests: whole crawls of the synthetic multi-host web
// (frontiertest/web), compared with the site's ground truth as its own servers recorded it.
//
// The cluster test (build tag integration) runs every role of docs/architecture.md — spiders, strategy workers, the DB
// worker — over a real Kafka broker and a real HBase (FRONTIER_TEST_KAFKA, FRONTIER_TEST_HBASE; deploy/up
// starts both), each on its own topics and tables. The single-process crawl has its own test in package
// standalone.
//
// The Frontera tests (frontera_test.go, same tag) mix the two implementations over Kafka: real Scrapy + Frontera
// 0.8.1 spiders under Frontier's worker binaries, and Frontier's spider binary under Frontera's own strategy
// and DB workers. The Python side lives in oracle/interop and runs in the oracle venv (oracle/setup.sh); the
// tests are skipped where that venv cannot run it, and fail under CI=true.
package e2e
