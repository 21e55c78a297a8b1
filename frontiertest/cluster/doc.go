// Package cluster is the one harness for tests that run a Frontier cluster over the shared Kafka and HBase
// (deploy/up; FRONTIER_TEST_KAFKA, FRONTIER_TEST_HBASE): e2e, bench/crawl and frontierctl's integration
// tests all build on it, so that the cluster is assembled for tests in one place.
//
//   - New gives a test topics and tables of its own, named after the run and created at once; the topics are
//     deleted and the tables dropped at the test's end (t.Cleanup), as franz-go's tmpTopic and Prometheus's
//     teststorage.New do.
//     Env.YAML and Env.Sets name them for the role binaries and frontierctl.
//   - Start runs the roles (DB workers, strategy workers, spiders) as goroutines of the test process; Procs runs
//     processes (the role binaries that Build builds, the standalone binary, Python's Frontera) and watches
//     them: logs to files, SIGKILL and restart, /readyz, the logs shown when the test fails.
//   - Idle and WaitIdle say when a crawl is over: every consumer group has committed everything on every
//     stream and the queue is empty, for a quiet period. WaitIdle then checks the end-of-crawl accounting
//     invariant on the run's HBase tables (frontiertest.RequireAccounted), so every cluster crawl that ends
//     there fails on a stranded URL.
//   - CheckCrawl compares what the synthetic web's servers saw with its ground truth (frontiertest/web).
//
// Like every frontiertest package it is imported only by tests (internal/archtest enforces it); it may
// import any package below the workers' level.
package cluster
