package standalone

import (
	"cmp"
	"slices"

	"github.com/frontiercrawl/frontier/dbworker"
)

// gatewayBatches returns the DB worker's batch sizes for the gateway's spider-feed partitions (parts; nil: all
// feeds of them): g as configured where it names partitions (db_worker.gateways.partitions), otherwise the
// gateway's partitions with g's sizes, or dbworker's suggested ones where g sets none. A gateway holds what it
// is sent and its clients keep each queue's politeness, so a spider's batch sizes (per_host 4) would make the
// DB worker read a partition whose hosts hold more than 4 URLs whole for every batch (BENCHMARKS.md,
// "The standalone put's feed generation, stop 36").
func gatewayBatches(g dbworker.GatewayBatches, parts []int, feeds int) dbworker.GatewayBatches {
	if len(g.Partitions) > 0 {
		return g
	}
	if parts == nil {
		for p := range feeds {
			g.Partitions = append(g.Partitions, p)
		}
	} else {
		g.Partitions = slices.Clone(parts)
	}
	g.PerHost = cmp.Or(g.PerHost, dbworker.GatewayPerHost)
	g.FeedBatch = cmp.Or(g.FeedBatch, dbworker.GatewayFeedBatch)
	return g
}
