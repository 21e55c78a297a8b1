// Command strategyworker runs one strategy worker (docs/architecture.md): it owns spider-log partition
// --partition-id, runs the URL-seen test through a bounded cache over the HBase states table, scores new links
// with the configured strategy (strategy_worker.strategy) and publishes update_score to the scoring log.
//
// Usage: strategyworker --config configs/strategyworker.yaml --partition-id N [--set key=value]…
package main

import "github.com/frontiercrawl/frontier/launch"

func main() { launch.Main("strategyworker") }
