package hbase

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	calls   *prometheus.CounterVec
	errors  *prometheus.CounterVec
	seconds *prometheus.HistogramVec
	retries prometheus.Counter
	waited  prometheus.Counter // seconds spent waiting for an unreachable gateway or HBase
	down    prometheus.Gauge
	// casConflicts counts counter writes whose check-and-put lost to another writer and were read again.
	casConflicts prometheus.Counter
}

// newMetrics registers the client's metrics on reg; nil registers nowhere.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_hbase_calls_total", Help: "Calls to the HBase Thrift2 gateway, by operation.",
		}, []string{"op"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_hbase_call_errors_total", Help: "Calls to the HBase Thrift2 gateway that failed after retries, by operation.",
		}, []string{"op"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "frontier_hbase_call_seconds", Help: "Latency of calls to the HBase Thrift2 gateway, retries included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"op"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "frontier_hbase_retries_total", Help: "Calls to the HBase Thrift2 gateway tried again after a transient error.",
		}),
		waited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "frontier_hbase_wait_seconds_total", Help: "Time spent waiting for an unreachable HBase or gateway, counted when it answers again.",
		}),
		down: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "frontier_hbase_unreachable", Help: "1 while calls to HBase fail with transient errors and are retried.",
		}),
		casConflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "frontier_hbase_counter_conflicts_total", Help: "Counter writes (domain metadata) whose check-and-put found the counter changed by another writer, and were read and tried again.",
		}),
	}
	if reg != nil {
		// A second Client on the same registry shares the first one's collectors.
		m.calls = register(reg, m.calls)
		m.errors = register(reg, m.errors)
		m.seconds = register(reg, m.seconds)
		m.retries = register(reg, m.retries)
		m.waited = register(reg, m.waited)
		m.down = register(reg, m.down)
		m.casConflicts = register(reg, m.casConflicts)
	}
	return m
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(fmt.Sprintf("hbase: registering metrics: %v", err))
	}
	return c
}

func (m *metrics) observe(op string, start time.Time, err error) {
	// op is "<rpc> <table>"; label by the RPC only, to keep cardinality fixed.
	rpc := op
	for i := 0; i < len(op); i++ {
		if op[i] == ' ' {
			rpc = op[:i]
			break
		}
	}
	m.calls.WithLabelValues(rpc).Inc()
	m.seconds.WithLabelValues(rpc).Observe(time.Since(start).Seconds())
	if err != nil {
		m.errors.WithLabelValues(rpc).Inc()
	}
}
