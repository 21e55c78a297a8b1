// Command urlfrontier runs the URLFrontier gateway of a cluster: a spider whose fetchers are URLFrontier
// clients (StormCrawler, any gRPC fetcher). It owns spider-feed partition N in place of spider N, serves the
// URLFrontier v2 gRPC API on --addr, leases the partition's requests to GetURLs, and publishes what clients
// report on the spider log (PutURLs known → page_crawled, discovered → links_extracted, or add_seeds when the
// client names no source page), so the strategy workers and the DB workers run exactly as for spiders
// (package urlfrontier, Gateway; docs/urlfrontier.md).
//
// Usage: urlfrontier --addr HOST:PORT --config configs/spider.yaml --partition-id N [--set key=value]…
//
// It reads the spider's configuration (the Kafka brokers, topics, codec and identity, spider.state_dir,
// stats_interval, shutdown_timeout): it stands where a spider stands. It also connects to HBase (hbase.*), whose
// states and page metadata GetURLStatus reads for a URL the gateway does not hold, and follows the control
// stream as a spider does (frontierctl pause, block). The leases, delays, blocks and limits
// are kept in spider.state_dir/urlfrontier-N (a Pebble database, synced writes), so a restart of the process
// keeps them. A spider or a second gateway started for the same partition waits as a standby.
//
// The DB worker sizes a feed partition's batches for a spider (db_worker.per_host 4, feed_batch 8,192). A
// gateway's clients keep each queue's politeness and the gateway holds what it is sent, so give the DB workers
// db_worker.gateways.partitions (the gateways' partition ids) with gateways.per_host 64 and
// gateways.feed_batch 32,768 (or, where every feed partition is a gateway's, db_worker.per_host and
// feed_batch themselves): with 4, a partition whose hosts each hold more than 4 queued URLs is read whole for
// every batch (BENCHMARKS.md, URLFrontier service, the cluster loop).
package main

import "github.com/frontiercrawl/frontier/launch"

func main() { launch.Main("urlfrontier") }
