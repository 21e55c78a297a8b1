package kafkabus

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the bus's Prometheus series, labelled by stream (and group on the consumer side).
type metrics struct {
	sent       *prometheus.CounterVec   // stream
	sentBytes  *prometheus.CounterVec   // stream
	sendRetry  *prometheus.CounterVec   // stream
	sendErrors *prometheus.CounterVec   // stream
	sendTime   *prometheus.HistogramVec // stream
	fetched    *prometheus.CounterVec   // stream, group
	fetchErr   *prometheus.CounterVec   // stream, group
	commits    *prometheus.CounterVec   // stream, group
	commitErr  *prometheus.CounterVec   // stream, group
	refused    *prometheus.CounterVec   // stream, group
	malformed  *prometheus.CounterVec   // stream, group
	lag        *prometheus.GaugeVec     // stream, group, partition
	lost       *prometheus.GaugeVec     // stream, group, partition
	lostStops  *prometheus.CounterVec   // stream, group
	fenced     prometheus.Counter       // works stopped because their process lost its partitions
	waited     prometheus.Counter       // seconds spent waiting for Kafka (outages that ended)
	down       prometheus.Gauge         // 1 while Kafka is unreachable
}

func newMetrics(reg prometheus.Registerer) *metrics {
	sg := []string{"stream", "group"}
	m := &metrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_sent_messages_total", Help: "Messages acknowledged by Kafka."}, []string{"stream"}),
		sentBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_sent_bytes_total", Help: "Key and value bytes acknowledged by Kafka."}, []string{"stream"}),
		sendRetry: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_send_retries_total", Help: "Messages Send wrote again after a retriable error."}, []string{"stream"}),
		sendErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_send_errors_total", Help: "Send calls that returned an error."}, []string{"stream"}),
		sendTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "frontier_bus_send_seconds", Help: "Time from Send to acknowledgement.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9)}, []string{"stream"}),
		fetched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_fetched_messages_total", Help: "Messages returned by Fetch."}, sg),
		fetchErr: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_fetch_errors_total", Help: "Errors kafka-go reported while fetching (retried)."}, sg),
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_commits_total", Help: "Offset commits acknowledged."}, sg),
		commitErr: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_commit_errors_total", Help: "Offset commits that failed."}, sg),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_commits_refused_total", Help: "Offset commit tries Kafka refused because another consumer is a member of the group (tried again until it leaves)."}, sg),
		malformed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_malformed_messages_total", Help: "Messages the caller could not decode and skipped."}, sg),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "frontier_bus_lag_messages", Help: "Latest offset minus the group's committed offset, as last read by Lag."},
			[]string{"stream", "group", "partition"}),
		lost: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "frontier_bus_offsets_lost_messages",
			Help: "Messages a group's committed offset is below the log start offset (deleted by retention before they were consumed), as last seen by a consumer or Lag; 0 once accepted (frontierctl accept-loss)."},
			[]string{"stream", "group", "partition"}),
		lostStops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "frontier_bus_offset_lost_total", Help: "Consumers stopped because their next offset fell out of retention."}, sg),
		fenced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "frontier_bus_fenced_total", Help: "Works whose writes were refused because this process no longer owned their partitions (a standby took over)."}),
		waited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "frontier_bus_wait_seconds_total", Help: "Time spent waiting for an unreachable Kafka, counted when it answers again."}),
		down: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "frontier_bus_unreachable", Help: "1 while calls to Kafka fail with transient errors and are retried."}),
	}
	if reg == nil {
		return m
	}
	register(reg, &m.sent)
	register(reg, &m.sentBytes)
	register(reg, &m.sendRetry)
	register(reg, &m.sendErrors)
	register(reg, &m.sendTime)
	register(reg, &m.fetched)
	register(reg, &m.fetchErr)
	register(reg, &m.commits)
	register(reg, &m.commitErr)
	register(reg, &m.refused)
	register(reg, &m.malformed)
	register(reg, &m.lag)
	register(reg, &m.lost)
	register(reg, &m.lostStops)
	register(reg, &m.fenced)
	register(reg, &m.waited)
	register(reg, &m.down)
	return m
}

// register registers *c, or replaces it with the collector already registered under its name, so that several
// buses in one process (tests, standalone) share their series.
func register[C prometheus.Collector](reg prometheus.Registerer, c *C) {
	if err := reg.Register(*c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				*c = existing
			}
		}
	}
}
