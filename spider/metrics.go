package spider

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the spider's Prometheus metrics, all named frontier_spider_*.
type metrics struct {
	pages        *prometheus.CounterVec // by status class: 2xx, 3xx, 4xx, 5xx, other
	bytes        prometheus.Counter
	errors       *prometheus.CounterVec // by error name
	links        prometheus.Counter
	truncated    prometheus.Counter
	redirects    prometheus.Counter
	hostBackoffs prometheus.Counter
	fetchSeconds prometheus.Histogram
	// discoveryToFetch is the time from a link's extraction (meta MetaKeyDiscovered) to the start of its fetch:
	// the whole loop through the spider log, the strategy worker, the scoring log, the queue and the feed.
	discoveryToFetch prometheus.Histogram
	inFlight         prometheus.Gauge
	pending          prometheus.Gauge
	uncommitted      prometheus.Gauge
	hosts            prometheus.Gauge
	robots           *prometheus.CounterVec // by outcome: ok, missing, unavailable, error, given_up
	seeds            prometheus.Counter
	sitemaps         *prometheus.CounterVec // sitemap entries and files, by outcome (sitemaps.go)
	dnsErrors        prometheus.Counter     // failed lookups of the politeness per IP (politeness.go)
	seedsInvalid     prometheus.Counter
	handlerErrors    prometheus.Counter
	decodeErrors     prometheus.Counter
	duplicates       prometheus.Counter
	reportErrors     prometheus.Counter
	committed        prometheus.Gauge
	messagesReport   prometheus.Counter
	held             prometheus.Counter
	nMessages        atomic.Int64 // messagesReport, readable without a registry
}

func (m *metrics) messagesReportValue() int64 { return m.nMessages.Load() }

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_spider_pages_total",
			Help: "Pages fetched (final responses after redirects), by status class."}, []string{"status"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_bytes_total",
			Help: "Response body bytes read from the network (before decoding)."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_spider_errors_total",
			Help: "Requests reported as request_error, by error name."}, []string{"error"}),
		links: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_links_total",
			Help: "Links reported in links_extracted."}),
		truncated: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_truncated_total",
			Help: "Responses truncated at max_body_bytes."}),
		redirects: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_redirects_total",
			Help: "3xx answers whose target was reported as a link (the frontier decides whether to fetch it)."}),
		hostBackoffs: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_host_backoffs_total",
			Help: "Times a host that kept failing (5xx, 408, 429, timeouts, resets) was backed off as a whole."}),
		fetchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "frontier_spider_fetch_seconds",
			Help: "Time to fetch a URL, redirects and body included.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
		discoveryToFetch: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "frontier_spider_discovery_to_fetch_seconds",
			Help:    "Time from a link's extraction by a spider to the start of its fetch (links carrying meta frontier_discovered).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 20)}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "frontier_spider_in_flight",
			Help: "Fetches running now."}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "frontier_spider_pending",
			Help: "Feed requests read and not yet reported (queued at their hosts, in flight or being reported): bounded by max_pending."}),
		uncommitted: prometheus.NewGauge(prometheus.GaugeOpts{Name: "frontier_spider_uncommitted",
			Help: "Feed messages read and not yet committed, reported ones included (a request still running holds the commit): bounded by max_uncommitted."}),
		hosts: prometheus.NewGauge(prometheus.GaugeOpts{Name: "frontier_spider_hosts",
			Help: "Hosts with queued or running requests, or waiting out their delay."}),
		robots: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_spider_robots_fetches_total",
			Help: "robots.txt fetches, by outcome (ok, missing, unavailable, error, given_up: failing past robots_give_up, treated as absent)."}, []string{"outcome"}),
		dnsErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_dns_errors_total",
			Help: "Host names that failed to resolve for the politeness per IP (each cached for dns_error_ttl)."}),
		sitemaps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_spider_sitemaps_total",
			Help: "Sitemap files and entries, by outcome (file_ok, file_error, entry, entry_skipped: outside the cross-host rule or not a URL, announced: robots.txt Sitemap lines sent as seeds)."}, []string{"outcome"}),
		seeds: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_seeds_total",
			Help: "Seed URLs published as add_seeds."}),
		seedsInvalid: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_seeds_invalid_total",
			Help: "Seed file lines skipped because they are not an http(s) URL."}),
		handlerErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_handler_errors_total",
			Help: "Errors returned by the response handler."}),
		decodeErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_feed_decode_errors_total",
			Help: "Feed messages skipped because they do not decode."}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_feed_duplicates_total",
			Help: "Feed requests dropped because the same attempt of the URL was still being fetched (a batch re-sent after a crash)."}),
		reportErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_report_errors_total",
			Help: "Failed sends to the spider log (retried)."}),
		committed: prometheus.NewGauge(prometheus.GaugeOpts{Name: "frontier_spider_feed_committed_offset",
			Help: "The last feed offset committed."}),
		messagesReport: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_log_messages_total",
			Help: "Messages sent to the spider log."}),
		held: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_spider_held_total",
			Help: "Requests of blocked hosts returned to the queue instead of fetched (frontierctl block)."}),
	}
	if reg != nil {
		reg.MustRegister(m.pages, m.bytes, m.errors, m.links, m.truncated, m.redirects, m.hostBackoffs, m.fetchSeconds, m.discoveryToFetch, m.inFlight, m.pending, m.uncommitted,
			m.hosts, m.robots, m.sitemaps, m.dnsErrors, m.seeds, m.seedsInvalid, m.handlerErrors, m.decodeErrors, m.duplicates, m.reportErrors, m.committed,
			m.messagesReport, m.held)
	}
	return m
}

func statusClass(code int) string {
	switch {
	case code >= 200 && code < 300:
		return "2xx"
	case code >= 300 && code < 400:
		return "3xx"
	case code >= 400 && code < 500:
		return "4xx"
	case code >= 500 && code < 600:
		return "5xx"
	}
	return "other"
}
