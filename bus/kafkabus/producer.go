package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"

	"github.com/frontiercrawl/frontier/bus"
)

// Producer writes to one stream through a kafka-go Writer. Safe for concurrent use; concurrent Sends share
// batches. The caller closes it.
type Producer struct {
	b      *Bus
	stream bus.Stream
	topic  string
	n      int
	part   bus.Partitioner
	w      *kafka.Writer
	// fenced makes one attempt per WriteMessages, for the writes made under a fence (bus.HasFence): its
	// retries are Send's own, each after a check of the fence. kafka-go's retries ask nothing, and a request
	// whose answer a pause (SIGSTOP) held past its read deadline is written again by them after the hand-over.
	fenced *kafka.Writer
	log    *slog.Logger
	closed atomic.Bool

	sent, sentBytes, retries, errs prometheus.Counter
	sendTime                       prometheus.Observer
}

var _ bus.Producer = (*Producer)(nil)

// Producer opens a producer of stream s. It checks that the topic exists with the configured partition count.
//
// With a non-nil p, Send puts each message on partition p(key, n), n the configured partition count, and the
// Writer's Balancer (a kafka.BalancerFunc) hands that partition to kafka-go unchanged: kafka-go's own hashing is
// never used, so the partition agrees with Frontera's partitioners (package partition). With a nil p, each
// message goes to its own Partition field.
func (b *Bus) Producer(ctx context.Context, s bus.Stream, p bus.Partitioner) (bus.Producer, error) {
	return b.NewProducer(ctx, s, p)
}

// NewProducer is Producer returning the concrete type.
func (b *Bus) NewProducer(ctx context.Context, s bus.Stream, p bus.Partitioner) (*Producer, error) {
	sc, err := b.stream(s)
	if err != nil {
		return nil, err
	}
	if err := b.checkTopic(ctx, s, sc); err != nil {
		return nil, err
	}
	pc := b.cfg.Producer
	comp, _ := compression(pc.Compression) // validated
	ack, _ := acks(pc.Acks)
	log := b.log.With("stream", string(s), "topic", sc.Topic)
	writer := func(attempts int) *kafka.Writer {
		return &kafka.Writer{
			Addr:  b.addr,
			Topic: sc.Topic,
			// The partition was computed by Send (from the Partitioner, or given); pass it through.
			Balancer:        kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.Partition }),
			MaxAttempts:     attempts,
			WriteBackoffMin: pc.RetryBackoff,
			WriteBackoffMax: pc.RetryBackoffMax,
			BatchSize:       pc.BatchSize,
			BatchBytes:      pc.BatchBytes,
			BatchTimeout:    pc.Linger,
			ReadTimeout:     b.cfg.RequestTimeout,
			WriteTimeout:    pc.WriteTimeout,
			RequiredAcks:    ack,
			Compression:     comp,
			Logger:          kafkaLogger(log, slog.LevelDebug),
			ErrorLogger:     kafkaLogger(log, slog.LevelDebug), // retried; an outage is logged once by the bus
			Transport:       b.tr,
		}
	}
	l := prometheus.Labels{"stream": string(s)}
	return &Producer{
		b: b, stream: s, topic: sc.Topic, n: sc.Partitions, part: p, w: writer(pc.MaxAttempts), fenced: writer(1), log: log,
		sent: b.metrics.sent.With(l), sentBytes: b.metrics.sentBytes.With(l), retries: b.metrics.sendRetry.With(l),
		errs: b.metrics.sendErrors.With(l), sendTime: b.metrics.sendTime.With(l),
	}, nil
}

// Send writes msgs and returns when every one is acknowledged (with acks=all, by every in-sync replica). On a
// retriable error (a broker restarting, a leader moving, a timeout) it writes the failed messages again, with
// a growing backoff, until they are acknowledged or ctx ends; so a Send may deliver a message twice (delivery
// is at least once), and a retried message may land after a later one of the same Send. A permanent error (a
// message too large, an unknown partition) is returned at once. Messages are not modified; the caller must not
// modify them while Send runs.
func (p *Producer) Send(ctx context.Context, msgs ...bus.Message) error {
	if p.closed.Load() {
		return bus.ErrClosed
	}
	if len(msgs) == 0 {
		return nil
	}
	if err := bus.CheckFence(ctx); err != nil { // a process that lost its partitions writes nothing for them
		p.errs.Inc()
		return err
	}
	start := time.Now()
	buf := kmsPool.Get().(*[]kafka.Message)
	defer func() {
		clear(*buf) // drop the references to the caller's bytes
		kmsPool.Put(buf)
	}()
	if cap(*buf) < len(msgs) {
		*buf = make([]kafka.Message, len(msgs))
	}
	kms := (*buf)[:len(msgs)]
	var bytes int
	for i, m := range msgs {
		q := m.Partition
		if p.part != nil {
			q = p.part(m.Key, p.n)
		}
		if q < 0 || q >= p.n {
			p.errs.Inc()
			return fmt.Errorf("kafkabus: %s: message %d (key %q) goes to partition %d, out of range [0, %d)", p.stream, i, truncate(m.Key), q, p.n)
		}
		kms[i] = kafka.Message{Key: m.Key, Value: m.Value, Partition: q}
		bytes += len(m.Key) + len(m.Value)
	}
	if err := p.write(ctx, kms); err != nil {
		p.errs.Inc()
		return err
	}
	p.sent.Add(float64(len(msgs)))
	p.sentBytes.Add(float64(bytes))
	p.sendTime.Observe(time.Since(start).Seconds())
	return nil
}

// kmsPool recycles the kafka.Message slices of Send (a kafka.Message is about 200 bytes; kafka-go copies them
// into its batches, so the slice is free again when WriteMessages returns).
var kmsPool = sync.Pool{New: func() any { return new([]kafka.Message) }}

func (p *Producer) write(ctx context.Context, kms []kafka.Message) error {
	backoff := p.b.cfg.Producer.RetryBackoff
	w := p.w
	if bus.HasFence(ctx) {
		w = p.fenced
	}
	for attempt := 1; ; attempt++ {
		err := w.WriteMessages(ctx, kms...)
		if err == nil {
			p.b.outage.Succeeded()
			return nil
		}
		if errors.Is(err, io.ErrClosedPipe) {
			return bus.ErrClosed
		}
		if ctx.Err() != nil {
			return fmt.Errorf("kafkabus: send %d messages to %s: %w (last error: %v)", len(kms), p.topic, ctx.Err(), err)
		}
		failed, cause := failedMessages(kms, err)
		if !retriable(cause) {
			if errors.Is(cause, kafka.MessageSizeTooLarge) {
				return p.tooLarge(failed, cause)
			}
			return fmt.Errorf("kafkabus: send %d messages to %s: %w", len(failed), p.topic, cause)
		}
		p.b.outage.Failed(cause, backoff)
		p.log.Debug("kafkabus: send failed, retrying", "messages", len(failed), "of", len(kms), "attempt", attempt,
			"backoff", backoff, "err", cause)
		p.retries.Add(float64(len(failed)))
		kms = failed
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("kafkabus: send %d messages to %s: %w (last error: %v)", len(kms), p.topic, ctx.Err(), cause)
		case <-t.C:
		}
		if err := bus.CheckFence(ctx); err != nil { // the backoff may have outlasted the partitions' ownership
			return err
		}
		backoff = min(2*backoff, p.b.cfg.Producer.RetryBackoffMax)
	}
}

// tooLarge explains a Message Size Too Large: one message above producer.batch_bytes (refused by kafka-go before
// anything is written), or a record batch the broker refused as above the topic's max.message.bytes. Nothing of
// the failed messages was written; the error wraps cause (errors.Is(err, kafka.MessageSizeTooLarge)).
func (p *Producer) tooLarge(failed []kafka.Message, cause error) error {
	limit := p.b.cfg.Producer.BatchBytes
	var mtl kafka.MessageTooLargeError
	if errors.As(cause, &mtl) {
		return fmt.Errorf("kafkabus: send %d messages to %s: a message (key %q) of %d bytes is above producer.batch_bytes = %d: %w",
			len(failed), p.topic, truncate(mtl.Message.Key), len(mtl.Message.Key)+len(mtl.Message.Value), limit, cause)
	}
	var size int
	for _, m := range failed {
		size += len(m.Key) + len(m.Value)
	}
	return fmt.Errorf("kafkabus: send %d messages (%d bytes) to %s: the broker refused a record batch of up to "+
		"producer.batch_bytes = %d as above the topic's max.message.bytes (Kafka's default: %d); lower batch_bytes "+
		"or raise the topic's max.message.bytes: %w", len(failed), size, p.topic, limit, BrokerDefaultMaxMessageBytes, cause)
}

// failedMessages returns the messages err says were not written, and the first of their errors.
func failedMessages(kms []kafka.Message, err error) ([]kafka.Message, error) {
	var werrs kafka.WriteErrors
	if !errors.As(err, &werrs) || len(werrs) != len(kms) {
		return kms, err
	}
	var failed []kafka.Message
	var first error
	for i, e := range werrs {
		if e != nil {
			failed = append(failed, kms[i])
			if first == nil {
				first = e
			}
		}
	}
	if first == nil {
		return kms, err
	}
	return failed, first
}

// retriable reports whether writing again may succeed: Kafka's retriable error codes, network errors and
// timeouts are; a message too large, an invalid topic, an authorization failure or a commit refused because its
// group has members (Consumer.Commit waits for the group apart from outages) are not.
func retriable(err error) bool {
	var perm permanent
	var inUse *GroupInUseError
	if errors.As(err, &perm) || errors.As(err, &inUse) {
		return false
	}
	var ou offsetsUnknown
	if errors.As(err, &ou) {
		return true
	}
	var ke kafka.Error
	if errors.As(err, &ke) {
		// A broker that is starting (or stopping) answers Broker Not Available, and a replica that is not
		// up yet Replica Not Available; kafka-go does not count them as temporary, but both clear up by
		// themselves when the restart ends (the fault suite's broker restart made a DB worker's lag call exit).
		return ke.Temporary() || ke == kafka.BrokerNotAvailable || ke == kafka.ReplicaNotAvailable
	}
	var mtl kafka.MessageTooLargeError // kafka-go returns it as a value
	return !errors.As(err, &mtl)
}

// Durable reports whether Send returns only once its messages survive this process being killed: always (Send
// waits for the broker's acknowledgement), so the spider journals the feed offsets it reported
// (spider.DurableProducer) and a SIGKILLed spider fetches again only what was in flight.
func (p *Producer) Durable() bool { return true }

// Close flushes nothing (Send is synchronous) and closes the writer. Sends after Close return bus.ErrClosed.
func (p *Producer) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	if err := errors.Join(p.w.Close(), p.fenced.Close()); err != nil {
		return fmt.Errorf("kafkabus: close producer of %s: %w", p.topic, err)
	}
	return nil
}

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

func compression(name string) (kafka.Compression, error) {
	switch name {
	case "", "none":
		return 0, nil
	case "gzip":
		return compress.Gzip, nil
	case "snappy":
		return compress.Snappy, nil
	case "lz4":
		return compress.Lz4, nil
	case "zstd":
		return compress.Zstd, nil
	}
	return 0, fmt.Errorf("%q is not a compression (want none, gzip, snappy, lz4 or zstd)", name)
}

func acks(name string) (kafka.RequiredAcks, error) {
	switch name {
	case "all":
		return kafka.RequireAll, nil
	case "leader":
		return kafka.RequireOne, nil
	}
	return 0, fmt.Errorf("%q is not an acks setting (want all or leader)", name)
}
