package strategyworker

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	events      *prometheus.CounterVec
	scheduled   prometheus.Counter
	rejected    prometheus.Counter
	badRequests prometheus.Counter
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
	}
	if reg != nil {
		reg.MustRegister(m.events, m.scheduled, m.rejected, m.badRequests)
	}
	return m
}
