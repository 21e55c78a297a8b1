package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/internal/outage"
)

// Bus opens producers and consumers of Frontier's streams on a Kafka cluster, and reads consumer lag. It holds
// one kafka-go Transport (a connection pool) shared by its producers, commits and lag reads; each consumer
// partition has its own connection. Safe for concurrent use. Close it after the producers and consumers it
// opened.
type Bus struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	addr    net.Addr
	tr      *kafka.Transport
	client  *kafka.Client
	dialer  *kafka.Dialer
	outage  *outage.Tracker
}

var _ bus.Bus = (*Bus)(nil)

// New returns a bus over the cluster cfg.Brokers names. It does not connect: the first producer or consumer
// does. log may be nil (nothing is logged); reg may be nil (metrics are kept but not registered). Metrics of
// several buses on one registry are shared.
func New(cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Bus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if b := cfg.Producer.BatchBytes; b > BrokerDefaultMaxMessageBytes {
		log.Warn("kafkabus: producer.batch_bytes is above Kafka's default message.max.bytes: every topic's max.message.bytes (or the brokers' message.max.bytes) must allow it, or a full batch fails as Message Size Too Large",
			"batch_bytes", b, "default_max_message_bytes", BrokerDefaultMaxMessageBytes)
	}
	dial := &net.Dialer{Timeout: cfg.DialTimeout}
	tr := &kafka.Transport{
		Dial:        dial.DialContext,
		ClientID:    cfg.ClientID,
		DialTimeout: cfg.DialTimeout,
		MetadataTTL: cfg.MetadataTTL,
	}
	addr := kafka.TCP(cfg.Brokers...)
	m := newMetrics(reg)
	tracker := outage.NewTracker("Kafka at "+strings.Join(cfg.Brokers, ","), log)
	tracker.OnRecover = func(d time.Duration) { m.waited.Add(d.Seconds()) }
	tracker.OnChange = func(down bool) {
		if down {
			m.down.Set(1)
		} else {
			m.down.Set(0)
		}
	}
	return &Bus{
		cfg:     cfg,
		log:     log,
		metrics: m,
		addr:    addr,
		tr:      tr,
		client:  &kafka.Client{Addr: addr, Transport: tr, Timeout: cfg.RequestTimeout},
		dialer:  &kafka.Dialer{ClientID: cfg.ClientID, Timeout: cfg.DialTimeout, DualStack: true},
		outage:  tracker,
	}, nil
}

// Unreachable returns nil while Kafka answers, and otherwise an error saying since when the bus has been
// retrying and why (for a readiness probe).
func (b *Bus) Unreachable() error { return b.outage.Err() }

// Config returns the bus's configuration.
func (b *Bus) Config() Config { return b.cfg }

// Partitions is the configured partition count of s (0 for an unknown stream).
func (b *Bus) Partitions(s bus.Stream) int {
	sc, _ := b.cfg.Stream(s)
	return sc.Partitions
}

// Close closes the idle connections of the shared transport.
func (b *Bus) Close() error {
	b.tr.CloseIdleConnections()
	return nil
}

// kafkaLogger adapts slog to kafka-go's Logger: kafka-go's chatter goes to Debug, its errors to Warn (they are
// retried; what reaches the caller is returned as an error).
func kafkaLogger(log *slog.Logger, level slog.Level, attrs ...any) kafka.Logger {
	l := log.With(attrs...)
	return kafka.LoggerFunc(func(msg string, args ...any) {
		if l.Enabled(context.Background(), level) {
			l.Log(context.Background(), level, "kafka-go: "+strings.TrimSpace(fmt.Sprintf(msg, args...)))
		}
	})
}

// stream returns the topic configuration of s, or an error naming it.
func (b *Bus) stream(s bus.Stream) (StreamConfig, error) {
	sc, ok := b.cfg.Stream(s)
	if !ok {
		return StreamConfig{}, fmt.Errorf("kafkabus: unknown stream %q (want %s, %s or %s)", s, bus.SpiderLog, bus.ScoringLog, bus.SpiderFeed)
	}
	return sc, nil
}

// checkTopic reads the topic's metadata and fails unless it has the configured partition count.
// An unreachable cluster is waited for up to Config.StartupWait.
func (b *Bus) checkTopic(ctx context.Context, s bus.Stream, sc StreamConfig) error {
	var have map[string]int
	err := b.retryStartup(ctx, func() error {
		var err error
		have, err = topicPartitions(ctx, b.client, []string{sc.Topic})
		return err
	})
	if err != nil {
		return fmt.Errorf("kafkabus: %s: %w", s, err)
	}
	n, ok := have[sc.Topic]
	if !ok {
		return fmt.Errorf("kafkabus: %s: topic %q does not exist on %s (create it with deploy/kafka-topics.sh)", s, sc.Topic, b.addr)
	}
	if n != sc.Partitions {
		return fmt.Errorf("kafkabus: %s: %w", s, &PartitionMismatchError{Topic: sc.Topic, Have: n, Want: sc.Partitions})
	}
	return nil
}

// committed returns the group's committed offset of each partition, -1 where it has none.
func (b *Bus) committed(ctx context.Context, topic, group string, parts []int) (map[int]int64, error) {
	var resp *kafka.OffsetFetchResponse
	err := b.retry(ctx, func() error {
		var err error
		resp, err = b.client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
		if err == nil && !errors.Is(resp.Error, kafka.GroupIdNotFound) {
			err = resp.Error
		}
		if err == nil && resp.Error == nil {
			// Older versions of the request report the group's coordinator errors (loading, moved) per
			// partition: retried as the request's own.
			for _, p := range resp.Topics[topic] {
				if p.Error != nil {
					return fmt.Errorf("partition %d: %w", p.Partition, p.Error)
				}
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kafkabus: fetch committed offsets of group %q on %s: %w", group, topic, err)
	}
	out := make(map[int]int64, len(parts))
	for _, p := range parts {
		out[p] = -1
	}
	if errors.Is(resp.Error, kafka.GroupIdNotFound) {
		// A group that never committed anywhere (kfake says so; Kafka answers -1 per partition).
		return out, nil
	}
	for _, p := range resp.Topics[topic] {
		out[p.Partition] = p.CommittedOffset
	}
	return out, nil
}

// Lag returns, per partition of stream s, the latest offset minus group's committed offset. Where the group
// never committed, the earliest offset still held stands in for the committed one (where a new consumer of the
// group starts), so the lag is what the group has yet to read.
func (b *Bus) Lag(ctx context.Context, s bus.Stream, group string) (map[int]int64, error) {
	sc, err := b.stream(s)
	if err != nil {
		return nil, err
	}
	ends, err := b.offsets(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("kafkabus: lag of %s: %w", s, err)
	}
	parts := make([]int, sc.Partitions)
	for p := range parts {
		parts[p] = p
	}
	committed, err := b.committed(ctx, sc.Topic, group, parts)
	if err != nil {
		return nil, err
	}
	out := make(map[int]int64, sc.Partitions)
	for _, po := range ends {
		c := committed[po.Partition]
		lost := int64(0)
		if c >= 0 && c < po.FirstOffset {
			lost = po.FirstOffset - c // deleted unread: the group's consumer stops (OffsetLostError)
		}
		b.metrics.lost.WithLabelValues(string(s), group, fmt.Sprint(po.Partition)).Set(float64(lost))
		if c < 0 || c < po.FirstOffset {
			c = po.FirstOffset
		}
		out[po.Partition] = max(po.LastOffset-c, 0)
		b.metrics.lag.WithLabelValues(string(s), group, fmt.Sprint(po.Partition)).Set(float64(out[po.Partition]))
	}
	return out, nil
}

// EndOffsets returns, per partition of stream s, the offset the next message produced will get. Two equal
// answers mean nothing was produced on s in between: frontierctl status uses it to tell a snapshot of lags
// and queue counts taken while work moved from one stream to the next from a quiet one.
func (b *Bus) EndOffsets(ctx context.Context, s bus.Stream) (map[int]int64, error) {
	sc, err := b.stream(s)
	if err != nil {
		return nil, err
	}
	ends, err := b.offsets(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("kafkabus: end offsets of %s: %w", s, err)
	}
	out := make(map[int]int64, len(ends))
	for _, po := range ends {
		out[po.Partition] = po.LastOffset
	}
	return out, nil
}

// offsets returns the first and last offsets of every partition of the stream sc, retried (like every admin
// call) while the cluster is unreachable or a partition has no serving leader, until ctx ends.
func (b *Bus) offsets(ctx context.Context, sc StreamConfig) ([]kafka.PartitionOffsets, error) {
	reqs := make([]kafka.OffsetRequest, 0, 2*sc.Partitions)
	for p := range sc.Partitions {
		reqs = append(reqs, kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
	}
	var ends []kafka.PartitionOffsets
	err := b.retry(ctx, func() error {
		resp, err := b.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{sc.Topic: reqs}})
		if err != nil {
			return fmt.Errorf("list offsets of %s: %w", sc.Topic, err)
		}
		ends = resp.Topics[sc.Topic]
		for _, po := range ends {
			if errors.Is(po.Error, kafka.UnknownTopicOrPartition) {
				// A topic that does not exist is not waited for: retrying cannot create it.
				return permanent{fmt.Errorf("topic %q does not exist on %s (create it with deploy/kafka-topics.sh): %w", sc.Topic, b.addr, po.Error)}
			}
			if po.Error != nil {
				return fmt.Errorf("offsets of %s partition %d: %w", sc.Topic, po.Partition, offsetsError(po.Error))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ends) != sc.Partitions {
		return nil, fmt.Errorf("topic %q answered for %d partitions, want %d", sc.Topic, len(ends), sc.Partitions)
	}
	return ends, nil
}

// offsetsError is the error of one partition in a ListOffsets answer. kafka-go sends ListOffsets as one request
// per partition and offset, and when some of them fail on the wire while others succeed (a connection reset or
// an i/o timeout: a broker restarting, a process resumed after SIGSTOP with stale connections) it reports their
// partitions with error code -1, Unknown, instead of the transport error. That is an outage like any other, so
// Unknown in a ListOffsets answer is retried (a DB worker resumed after SIGSTOP exited on it, reading its feed
// lag); every other code keeps its meaning.
func offsetsError(err error) error {
	if errors.Is(err, kafka.Unknown) {
		return offsetsUnknown{err}
	}
	return err
}

// offsetsUnknown marks a ListOffsets partition error that retry retries (see offsetsError).
type offsetsUnknown struct{ error }

func (e offsetsUnknown) Unwrap() error { return e.error }

// retry calls fn until it succeeds, returns an error that is not retriable (see retriable), or ctx ends, with
// the consumer's backoff (exponential, jittered, capped at RetryBackoffMax) between tries: a broker restart of
// any length is waited out, reported through the bus's outage tracker (one log line when the wait starts, one
// when it ends, frontier_bus_wait_seconds_total). Group coordinator errors are the usual retriable ones too: the
// coordinator moves when a broker restarts, and is not ready while __consumer_offsets is being loaded.
func (b *Bus) retry(ctx context.Context, fn func() error) error {
	bo := outage.NewBackoff(b.cfg.Consumer.RetryBackoff, b.cfg.Consumer.RetryBackoffMax)
	for {
		err := fn()
		if err == nil {
			b.outage.Succeeded()
			return nil
		}
		if !retriable(err) || ctx.Err() != nil {
			return err
		}
		d := bo.Next()
		b.outage.Failed(err, d)
		b.log.Debug("kafkabus: retrying", "backoff", d, "err", err)
		if !outage.Sleep(ctx, d) {
			return err
		}
	}
}

// permanent marks an error retry must not retry.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// retryStartup is retry bounded by Config.StartupWait: what a process does while it opens its streams, so that
// it may start before Kafka does. The error after the wait says how long it waited.
func (b *Bus) retryStartup(ctx context.Context, fn func() error) error {
	sctx, cancel := context.WithTimeout(ctx, b.cfg.StartupWait)
	defer cancel()
	err := b.retry(sctx, fn)
	if err != nil && ctx.Err() == nil && sctx.Err() != nil && retriable(err) {
		return fmt.Errorf("Kafka at %s did not answer within kafka.startup_wait (%s): %w", strings.Join(b.cfg.Brokers, ","), b.cfg.StartupWait, err)
	}
	return err
}
