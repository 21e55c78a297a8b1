package dbworker

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	scheduled, badItems, batches, sent, pages, linksSkipped prometheus.Counter
	held                                                    prometheus.Counter
	lag                                                     *prometheus.GaugeVec
}

// newMetrics registers the worker's metrics on reg (nil: none), with linksCache (Config.LinksCache) as a
// constant gauge: the standalone lowers it to fit its memory limit, and an operator should see what it got.
func newMetrics(reg prometheus.Registerer, linksCache int) *metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_dbworker_" + name, Help: help})
	}
	m := &metrics{
		scheduled:    c("scheduled_total", "Requests written to the queue from the scoring log."),
		badItems:     c("rejected_items_total", "update_score messages that could not be queued (no fingerprint, bad score)."),
		batches:      c("batches_total", "Batches put on the spider feed."),
		sent:         c("feed_requests_total", "Requests put on the spider feed."),
		pages:        c("pages_recorded_total", "Page metadata records written from the spider log."),
		held:         c("held_total", "Queued requests of blocked hosts left in the queue by a batch (frontierctl block)."),
		linksSkipped: c("links_skipped_total", "Links not recorded again because the links role recorded them lately (links_cache)."),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "frontier_dbworker_feed_lag",
			Help: "Spider-feed lag per partition at the last check."}, []string{"partition"}),
	}
	if reg != nil {
		capacity := prometheus.NewGauge(prometheus.GaugeOpts{Name: "frontier_dbworker_links_cache_entries_max",
			Help: "How many fingerprints of recorded links the links role remembers at most (links_cache)."})
		capacity.Set(float64(linksCache))
		reg.MustRegister(m.scheduled, m.badItems, m.batches, m.sent, m.pages, m.held, m.linksSkipped, m.lag, capacity)
	}
	return m
}
