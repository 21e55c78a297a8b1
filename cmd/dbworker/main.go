// Command dbworker runs the DB worker (docs/architecture.md): it schedules the scoring log's update_score
// messages into the HBase queue, puts each spider's next batch on its spider-feed partition when the
// partition has room (its lag is below its last batch, or below db_worker.max_lag when set), and records page
// metadata from the spider log. The roles can run in one process or apart (db_worker.roles: scoring, batches,
// links). It follows the control stream (pause,
// resume, block, unblock: package control) and keeps the crawl-wide counters frontierctl status reads.
//
// Usage: dbworker --config configs/dbworker.yaml [--set db_worker.roles=batches]…
package main

import "github.com/frontiercrawl/frontier/launch"

func main() { launch.Main("dbworker") }
