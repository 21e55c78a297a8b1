// Package e2e holds Frontier's end-to-end tests: whole crawls of the synthetic multi-host web
// (frontiertest/web), compared with the site's ground truth as its own servers recorded it.
//
// The cluster test (build tag integration) runs every role of DESIGN.md §1 — spiders, strategy workers, the DB
// worker — over a real Kafka broker and a real HBase (FRONTIER_TEST_KAFKA, FRONTIER_TEST_HBASE; deploy/up
// starts both), each on its own topics and tables. The single-process crawl has its own test in package
// embedded.
package e2e
