package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
)

// Consumer reads explicit partitions of one stream and commits offsets in one consumer group. Each partition
// has a kafka-go Reader (no GroupID: kafka-go's group Reader cannot be given partitions) and a goroutine that
// moves what it fetches into a bounded buffer, from which Fetch takes. Offsets are committed with
// OffsetCommit requests as a "simple consumer" of the group (generation -1, no member id), only when the caller
// calls Commit. Fetch and Commit are for one goroutine; Close may be called from any. The caller closes it.
type Consumer struct {
	b      *Bus
	stream bus.Stream
	topic  string
	group  string
	parts  []int
	log    *slog.Logger

	readers []*kafka.Reader
	ch      chan bus.Message
	quit    chan struct{} // closed by Close: wakes Fetch
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once

	mu        sync.Mutex    // guards committed
	committed map[int]int64 // next offset per partition, as last committed (or found) by this consumer
	fetched   prometheus.Counter
	fetchErr  prometheus.Counter
	commits   prometheus.Counter
	commitErr prometheus.Counter
	malformed prometheus.Counter
}

var (
	_ bus.Consumer          = (*Consumer)(nil)
	_ bus.MalformedReporter = (*Consumer)(nil)
)

// Consumer opens a consumer of partitions of stream s in group. See NewConsumer.
func (b *Bus) Consumer(ctx context.Context, s bus.Stream, group string, partitions []int) (bus.Consumer, error) {
	return b.NewConsumer(ctx, s, group, partitions)
}

// NewConsumer opens a consumer of the given partitions of stream s in group, starting at the group's committed
// offset of each partition. Where the group never committed (or its offset fell out of retention), it starts
// at the earliest offset still held: a new group reads the whole backlog, where Frontera started at the latest
// offset and skipped it. It checks that the topic exists with the configured partition count.
func (b *Bus) NewConsumer(ctx context.Context, s bus.Stream, group string, partitions []int) (*Consumer, error) {
	sc, err := b.stream(s)
	if err != nil {
		return nil, err
	}
	if group == "" {
		return nil, fmt.Errorf("kafkabus: %s: empty consumer group", s)
	}
	if err := bus.CheckPartitions(s, partitions, sc.Partitions); err != nil {
		return nil, err
	}
	if err := b.checkTopic(ctx, s, sc); err != nil {
		return nil, err
	}
	start, err := b.committed(ctx, sc.Topic, group, partitions)
	if err != nil {
		return nil, err
	}
	cc := b.cfg.Consumer
	l := prometheus.Labels{"stream": string(s), "group": group}
	c := &Consumer{
		b: b, stream: s, topic: sc.Topic, group: group, parts: slices.Clone(partitions),
		log:       b.log.With("stream", string(s), "topic", sc.Topic, "group", group),
		ch:        make(chan bus.Message, cc.Buffer),
		quit:      make(chan struct{}),
		committed: make(map[int]int64, len(partitions)),
		fetched:   b.metrics.fetched.With(l), fetchErr: b.metrics.fetchErr.With(l),
		commits: b.metrics.commits.With(l), commitErr: b.metrics.commitErr.With(l),
		malformed: b.metrics.malformed.With(l),
	}
	for _, p := range partitions {
		plog := c.log.With("partition", p)
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers:         b.cfg.Brokers,
			Topic:           sc.Topic,
			Partition:       p,
			Dialer:          b.dialer,
			QueueCapacity:   cc.QueueCapacity,
			MinBytes:        cc.MinBytes,
			MaxBytes:        cc.MaxBytes,
			MaxWait:         cc.MaxWait,
			ReadLagInterval: -1,
			ReadBackoffMin:  cc.RetryBackoff,
			ReadBackoffMax:  cc.RetryBackoffMax,
			MaxAttempts:     3,
			Logger:          kafkaLogger(plog, slog.LevelDebug),
			ErrorLogger:     kafkaLogger(plog, slog.LevelWarn),
		})
		c.readers = append(c.readers, r)
		off := start[p]
		if off < 0 {
			off = kafka.FirstOffset
		} else {
			c.committed[p] = off
		}
		if err := r.SetOffset(off); err != nil {
			c.closeReaders()
			return nil, fmt.Errorf("kafkabus: %s: start partition %d at offset %d: %w", s, p, off, err)
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	for i, p := range partitions {
		r, plog := c.readers[i], c.log.With("partition", p)
		c.wg.Go(func() { c.pump(runCtx, r, plog, p) })
	}
	c.log.Debug("kafkabus: consumer opened", "partitions", partitions, "start", start)
	return c, nil
}

// pump moves messages from one partition's reader into c.ch until the consumer closes. kafka-go's reader
// reconnects by itself after broker errors; the errors it reports are counted, logged and waited out.
func (c *Consumer) pump(ctx context.Context, r *kafka.Reader, log *slog.Logger, p int) {
	backoff := c.b.cfg.Consumer.RetryBackoff
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return
			}
			c.fetchErr.Inc()
			log.Warn("kafkabus: fetch failed, retrying", "backoff", backoff, "err", err)
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, c.b.cfg.Consumer.RetryBackoffMax)
			continue
		}
		backoff = c.b.cfg.Consumer.RetryBackoff
		select {
		case c.ch <- bus.Message{Key: m.Key, Value: m.Value, Partition: p, Offset: m.Offset}:
		case <-ctx.Done():
			return
		}
	}
}

// Fetch returns up to max messages in partition order, waiting for at least one until ctx ends. It returns
// bus.ErrClosed after Close.
func (c *Consumer) Fetch(ctx context.Context, max int) ([]bus.Message, error) {
	if max <= 0 {
		return nil, fmt.Errorf("kafkabus: fetch max = %d, want > 0", max)
	}
	select {
	case <-c.quit:
		return nil, bus.ErrClosed
	default:
	}
	var first bus.Message
	select {
	case first = <-c.ch:
	case <-c.quit:
		return nil, bus.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([]bus.Message, 1, min(max, 1+len(c.ch)))
	out[0] = first
	for len(out) < max {
		select {
		case m := <-c.ch:
			out = append(out, m)
			continue
		default:
		}
		break
	}
	c.fetched.Add(float64(len(out)))
	return out, nil
}

// Commit commits, per partition, one past the highest offset among msgs in the consumer's group. Call it only
// once the effects of those messages (and of every message fetched before them) are durable. A commit that
// would move a partition's offset backwards is skipped.
func (c *Consumer) Commit(ctx context.Context, msgs []bus.Message) error {
	select {
	case <-c.quit:
		return bus.ErrClosed
	default:
	}
	if len(msgs) == 0 {
		return nil
	}
	next := bus.CommitOffsets(msgs)
	var offs []kafka.OffsetCommit
	c.mu.Lock()
	for p, o := range next {
		if !slices.Contains(c.parts, p) {
			c.mu.Unlock()
			return fmt.Errorf("kafkabus: %s: commit of partition %d, which this consumer does not own (it owns %v)", c.stream, p, c.parts)
		}
		if cur, ok := c.committed[p]; ok && o <= cur {
			continue
		}
		offs = append(offs, kafka.OffsetCommit{Partition: p, Offset: o})
	}
	c.mu.Unlock()
	if len(offs) == 0 {
		return nil
	}
	slices.SortFunc(offs, func(a, b kafka.OffsetCommit) int { return a.Partition - b.Partition })
	err := c.b.retry(ctx, func() error {
		resp, err := c.b.client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
			GroupID:      c.group,
			GenerationID: -1, // a simple consumer: no group membership, explicit partitions
			Topics:       map[string][]kafka.OffsetCommit{c.topic: offs},
		})
		if err != nil {
			return err
		}
		var errs []error
		for _, p := range resp.Topics[c.topic] {
			if p.Error != nil {
				errs = append(errs, fmt.Errorf("partition %d: %w", p.Partition, p.Error))
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		c.commitErr.Inc()
		return fmt.Errorf("kafkabus: commit %s offsets %s for group %q: %w", c.topic, offsetList(offs), c.group, err)
	}
	c.mu.Lock()
	for _, oc := range offs {
		if cur, ok := c.committed[oc.Partition]; !ok || oc.Offset > cur {
			c.committed[oc.Partition] = oc.Offset
		}
	}
	c.mu.Unlock()
	c.commits.Inc()
	return nil
}

func offsetList(offs []kafka.OffsetCommit) string {
	b := []byte{}
	for i, o := range offs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(o.Partition), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, o.Offset, 10)
	}
	return string(b)
}

// Malformed counts m in frontier_bus_malformed_messages_total and logs it with its partition and offset.
func (c *Consumer) Malformed(m bus.Message, err error) {
	c.malformed.Inc()
	c.log.Warn("kafkabus: skipping malformed message", "partition", m.Partition, "offset", m.Offset,
		"key", string(truncate(m.Key)), "bytes", len(m.Value), "err", err)
}

// Close stops fetching and closes the partition readers, without committing: what was fetched but not
// committed is delivered again to the group's next consumer. Later calls return bus.ErrClosed.
func (c *Consumer) Close() error {
	c.once.Do(func() {
		close(c.quit)
		c.cancel()
		c.closeReaders()
		c.wg.Wait()
	})
	return nil
}

func (c *Consumer) closeReaders() {
	for _, r := range c.readers {
		if err := r.Close(); err != nil {
			c.log.Debug("kafkabus: close reader", "err", err)
		}
	}
}
