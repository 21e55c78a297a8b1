package urlfrontier

import "github.com/prometheus/client_golang/prometheus"

// metrics are the service's Prometheus metrics, all named frontier_urlfrontier_*.
type metrics struct {
	puts   *prometheus.CounterVec // URLs put, by kind (discovered, known) and ack status (OK, SKIPPED, FAIL)
	leased prometheus.Counter     // URLs handed out by GetURLs
	errors *prometheus.CounterVec // calls that failed, by RPC
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		puts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_urlfrontier_puts_total",
			Help: "URLs put through PutURLs and PutDiscovered, by kind and acknowledgement status."}, []string{"kind", "status"}),
		leased: prometheus.NewCounter(prometheus.CounterOpts{Name: "frontier_urlfrontier_leased_total",
			Help: "URLs handed out (leased) by GetURLs."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "frontier_urlfrontier_rpc_errors_total",
			Help: "URLFrontier calls that failed (invalid arguments, store errors), by RPC."}, []string{"rpc"}),
	}
	if reg != nil {
		reg.MustRegister(m.puts, m.leased, m.errors)
	}
	return m
}

func (m *metrics) put(known bool, s Status) {
	kind := "discovered"
	if known {
		kind = "known"
	}
	name := [...]string{OK: "OK", Skipped: "SKIPPED", Fail: "FAIL"}[s]
	m.puts.WithLabelValues(kind, name).Inc()
}
