package strategyworker

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier/state"
)

type metrics struct {
	events      *prometheus.CounterVec
	scheduled   prometheus.Counter
	rejected    prometheus.Counter
	badRequests prometheus.Counter
	redirects   *prometheus.CounterVec // by outcome: scheduled, seen
	retries     *prometheus.CounterVec // by outcome: scheduled, gave_up
	dropped     *prometheus.CounterVec // by reason (scope.Reasons)
	blocked     prometheus.Counter     // URLs of hosts blocked by frontierctl block, queued to wait for unblock
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_strategyworker_events_total",
			Help: "Spider-log events handled, by type."}, []string{"type"}),
		scheduled: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_strategyworker_scheduled_total",
			Help: "update_score messages sent to the scoring log."}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_strategyworker_rejected_scores_total",
			Help: "Scores outside [0, 1] the strategy gave, rejected for their URL only."}),
		badRequests: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_strategyworker_bad_requests_total",
			Help: "Requests that could not be fingerprinted or encoded, skipped."}),
		redirects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_strategyworker_redirects_total",
			Help: "Redirect targets reported by the spiders, by outcome: scheduled (new), seen (already queued, crawled or in error: not fetched again)."},
			[]string{"outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_strategyworker_retries_total",
			Help: "Transient failures (retry.statuses, retry.errors), by outcome: scheduled (tried again later), gave_up (retries spent: the URL ends ERROR)."},
			[]string{"outcome"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_strategyworker_dropped_total",
			Help: "URLs dropped by the scope or a trap defence before the strategy could schedule them, by reason."},
			[]string{"reason"}),
		blocked: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_strategyworker_blocked_scheduled_total",
			Help: "URLs of hosts blocked by frontierctl block scheduled while blocked: queued, and held there by the DB workers until unblock."}),
	}
	if reg != nil {
		reg.MustRegister(m.events, m.scheduled, m.rejected, m.badRequests, m.redirects, m.retries, m.dropped, m.blocked)
	}
	return m
}

// registerCache exposes the state cache's counters, read when scraped.
func registerCache(reg prometheus.Registerer, c *state.Cache) {
	if reg == nil {
		return
	}
	counter := func(name, help string, v func(state.CacheStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "frontier_strategyworker_state_cache_" + name, Help: help},
			func() float64 { return float64(v(c.Stats())) })
	}
	gauge := func(name, help string, v func(state.CacheStats) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "frontier_strategyworker_state_cache_" + name, Help: help},
			func() float64 { return float64(v(c.Stats())) })
	}
	reg.MustRegister(
		counter("hits_total", "Fingerprints answered from the state cache.", func(s state.CacheStats) int64 { return s.Hits }),
		counter("misses_total", "Fingerprints read from the state store.", func(s state.CacheStats) int64 { return s.Misses }),
		counter("evictions_total", "Clean entries dropped to make room.", func(s state.CacheStats) int64 { return s.Evictions }),
		gauge("entries", "Entries held in the state cache.", func(s state.CacheStats) int { return s.Len }),
	)
}
