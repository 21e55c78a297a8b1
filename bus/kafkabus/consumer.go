package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/internal/outage"
)

// Consumer reads explicit partitions of one stream and commits offsets in one consumer group. Each partition
// has a goroutine that long-polls the partition's leader with kafka-go Fetch requests (kafka.Client.Fetch; the
// group Reader cannot be given partitions) and hands whole record batches to a bounded channel, from which
// Fetch takes. Offsets are committed with OffsetCommit requests as a "simple consumer" of the group
// (generation -1, no member id), only when the caller calls Commit. Fetch and Commit are for one goroutine;
// Close may be called from any. The caller closes it.
type Consumer struct {
	b      *Bus
	stream bus.Stream
	topic  string
	group  string
	parts  []int
	log    *slog.Logger

	client  *kafka.Client // for Fetch requests, on a transport of this consumer's own
	tr      *kafka.Transport
	ch      chan []bus.Message // chunks of consecutive messages of one partition
	pending []bus.Message      // what the last Fetch left of a chunk
	quit    chan struct{}      // closed by Close: wakes Fetch
	failed  chan struct{}      // closed when a partition's offset fell out of retention; err says how
	err     error              // set before failed is closed
	failOne sync.Once
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once

	mu        sync.Mutex    // guards committed
	committed map[int]int64 // next offset per partition, as last committed (or found) by this consumer
	fetched   prometheus.Counter
	fetchErr  prometheus.Counter
	commits   prometheus.Counter
	commitErr prometheus.Counter
	refused   prometheus.Counter
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
// offset of each partition. Where the group never committed, it starts at the earliest offset still held: a new
// group reads the whole backlog, where Frontera started at the latest offset and skipped it. Where the offset to
// read fell out of retention, Fetch fails with an *OffsetLostError (see retention.go). It checks that the topic
// exists with the configured partition count.
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
	tr := &kafka.Transport{
		Dial:        (&net.Dialer{Timeout: b.cfg.DialTimeout}).DialContext,
		ClientID:    b.cfg.ClientID,
		DialTimeout: b.cfg.DialTimeout,
		MetadataTTL: b.cfg.MetadataTTL,
	}
	c := &Consumer{
		b: b, stream: s, topic: sc.Topic, group: group, parts: slices.Clone(partitions),
		log:       b.log.With("stream", string(s), "topic", sc.Topic, "group", group),
		tr:        tr,
		client:    &kafka.Client{Addr: b.addr, Transport: tr},
		ch:        make(chan []bus.Message, max(1, cc.Buffer/chunkSize)),
		quit:      make(chan struct{}),
		failed:    make(chan struct{}),
		committed: make(map[int]int64, len(partitions)),
		fetched:   b.metrics.fetched.With(l), fetchErr: b.metrics.fetchErr.With(l),
		commits: b.metrics.commits.With(l), commitErr: b.metrics.commitErr.With(l), refused: b.metrics.refused.With(l),
		malformed: b.metrics.malformed.With(l),
	}
	for p, off := range start {
		if off >= 0 {
			c.committed[p] = off
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	for _, p := range partitions {
		plog := c.log.With("partition", p)
		c.wg.Go(func() { c.pump(runCtx, p, start[p], plog) })
	}
	c.log.Debug("kafkabus: consumer opened", "partitions", partitions, "start", start)
	return c, nil
}

// chunkSize is the most messages pump hands over at once.
const chunkSize = 1024

// pump fetches partition p from offset next (-1: the earliest offset held) and hands the messages to c.ch, until
// the consumer closes. Errors (a broker restarting, a leader moving, a timeout) are counted, logged and retried
// with backoff from the same offset; kafka-go's transport reconnects and re-reads metadata by itself.
func (c *Consumer) pump(ctx context.Context, p int, next int64, log *slog.Logger) {
	cc := c.b.cfg.Consumer
	backoff := cc.RetryBackoff
	fail := func(what string, err error) bool {
		if ctx.Err() != nil {
			return false
		}
		c.fetchErr.Inc()
		c.b.outage.Failed(err, backoff)
		log.Debug("kafkabus: "+what+" failed, retrying", "offset", next, "backoff", backoff, "err", err)
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, cc.RetryBackoffMax)
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	for ctx.Err() == nil {
		if next < 0 {
			first, _, err := c.offsets(ctx, p)
			if err != nil {
				if !fail("read first offset", err) {
					return
				}
				continue
			}
			next = first
		}
		rctx, cancel := context.WithTimeout(ctx, cc.MaxWait+c.b.cfg.RequestTimeout)
		resp, err := c.client.Fetch(rctx, &kafka.FetchRequest{
			Topic: c.topic, Partition: p, Offset: next,
			MinBytes: int64(cc.MinBytes), MaxBytes: int64(cc.MaxBytes), MaxWait: cc.MaxWait,
		})
		if err == nil {
			err = resp.Error
		}
		if err != nil {
			cancel()
			if errors.Is(err, kafka.OffsetOutOfRange) {
				first, last, oerr := c.offsets(ctx, p)
				switch {
				case oerr == nil && next < first:
					// Below the log start: retention deleted messages this group never consumed. Stop loudly;
					// a jump to the earliest offset would lose them without a trace.
					c.fail(&OffsetLostError{Stream: c.stream, Topic: c.topic, Partition: p, Group: c.group, Committed: next, LogStart: first}, log)
					return
				case oerr == nil:
					// Past the end (the topic was deleted and created again): nothing was skipped; restart at the
					// earliest offset held, a replay rather than a loss.
					log.Warn("kafkabus: offset past the end of the log (was the topic recreated?), restarting at the earliest offset held",
						"offset", next, "first", first, "last", last)
					next = first
					continue
				}
				err = oerr
			}
			if !fail("fetch", err) {
				return
			}
			continue
		}
		backoff = cc.RetryBackoff
		c.b.outage.Succeeded()
		chunk := make([]bus.Message, 0, 64)
		for {
			r, err := resp.Records.ReadRecord()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					log.Warn("kafkabus: reading a fetched batch failed; fetching again", "offset", next, "err", err)
					c.fetchErr.Inc()
				}
				break
			}
			if r.Offset < next { // a batch may start before the offset asked for
				continue
			}
			m := bus.Message{Partition: p, Offset: r.Offset}
			if r.Key != nil {
				m.Key, err = kafka.ReadAll(r.Key)
			}
			if err == nil && r.Value != nil {
				m.Value, err = kafka.ReadAll(r.Value)
			}
			if err != nil {
				log.Warn("kafkabus: reading a fetched record failed; fetching again", "offset", r.Offset, "err", err)
				c.fetchErr.Inc()
				break
			}
			chunk = append(chunk, m)
			next = r.Offset + 1
			if len(chunk) == chunkSize {
				if !c.hand(ctx, chunk) {
					cancel()
					return
				}
				chunk = make([]bus.Message, 0, 64)
			}
		}
		cancel()
		if len(chunk) > 0 && !c.hand(ctx, chunk) {
			return
		}
	}
}

// fail records err as the consumer's error, counts and logs it, and makes every later Fetch return it.
func (c *Consumer) fail(err *OffsetLostError, log *slog.Logger) {
	c.failOne.Do(func() {
		c.err = err
		c.b.metrics.lostStops.WithLabelValues(string(c.stream), c.group).Inc()
		c.b.metrics.lost.WithLabelValues(string(c.stream), c.group, strconv.Itoa(err.Partition)).Set(float64(err.Lost()))
		log.Error("kafkabus: offset fell out of retention; the consumer stops", "committed", err.Committed,
			"log_start", err.LogStart, "lost", err.Lost(), "err", err)
		close(c.failed)
	})
}

// hand gives a chunk to Fetch, waiting while the buffer is full; false if the consumer closed meanwhile.
func (c *Consumer) hand(ctx context.Context, chunk []bus.Message) bool {
	select {
	case c.ch <- chunk:
		return true
	case <-ctx.Done():
		return false
	}
}

// offsets returns the first and the next-to-be-written offset of partition p.
func (c *Consumer) offsets(ctx context.Context, p int) (first, last int64, err error) {
	resp, err := c.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{c.topic: {kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p)}},
	})
	if err != nil {
		return 0, 0, err
	}
	for _, po := range resp.Topics[c.topic] {
		if po.Partition == p {
			if po.Error != nil {
				return 0, 0, po.Error
			}
			return po.FirstOffset, po.LastOffset, nil
		}
	}
	return 0, 0, fmt.Errorf("no offsets for partition %d in the answer", p)
}

// Fetch returns up to max messages in partition order, waiting for at least one until ctx ends. It returns
// bus.ErrClosed after Close, and an *OffsetLostError (errors.Is bus.ErrOffsetLost), every time, once the next
// offset of one of its partitions fell out of retention.
func (c *Consumer) Fetch(ctx context.Context, max int) ([]bus.Message, error) {
	if max <= 0 {
		return nil, fmt.Errorf("kafkabus: fetch max = %d, want > 0", max)
	}
	select {
	case <-c.quit:
		return nil, bus.ErrClosed
	case <-c.failed:
		// Nothing more, from any partition: what was fetched and not committed is delivered again once the
		// operator resolved the loss.
		return nil, c.err
	default:
	}
	if len(c.pending) == 0 {
		select {
		case c.pending = <-c.ch:
		case <-c.quit:
			return nil, bus.ErrClosed
		case <-c.failed:
			return nil, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	out := make([]bus.Message, 0, min(max, len(c.pending)+len(c.ch)*chunkSize))
	for {
		n := min(max-len(out), len(c.pending))
		out = append(out, c.pending[:n]...)
		c.pending = c.pending[n:]
		if len(out) == max {
			break
		}
		select {
		case c.pending = <-c.ch:
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
// would move a partition's offset backwards is skipped. Like every request, it waits out an outage; it also
// waits while another consumer is a member of the group (see GroupInUseError), and gives up if the fence on
// ctx says meanwhile that the partitions are no longer this process's.
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
	if err := bus.CheckFence(ctx); err != nil { // a process that lost its partitions commits nothing for them
		c.commitErr.Inc()
		return err
	}
	err := c.b.retry(ctx, func() error { return c.b.commitOffsets(ctx, c.group, c.topic, offs) })
	var inUse *GroupInUseError
	if errors.As(err, &inUse) {
		err = c.waitGroupEmpty(ctx, offs, err)
	}
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
		c.wg.Wait()
		c.tr.CloseIdleConnections()
	})
	return nil
}

// waitGroupEmpty tries the commit of offs again, with the consumer's backoff, while Kafka refuses it because
// another consumer is a member of the group (err, the first refusal, is a *GroupInUseError). It logs when the
// wait starts and when it ends and counts every refusal, but the bus's outage tracker stays out of it: Kafka
// answers, and the fetches and sends that succeed meanwhile would end and restart the "outage" at every try.
// It gives up when ctx ends or its fence says the partitions are no longer this process's.
func (c *Consumer) waitGroupEmpty(ctx context.Context, offs []kafka.OffsetCommit, err error) error {
	start := time.Now()
	c.refused.Inc()
	c.log.Warn("kafkabus: offset commit refused; trying again until the group has no members", "err", err)
	bo := outage.NewBackoff(c.b.cfg.Consumer.RetryBackoff, c.b.cfg.Consumer.RetryBackoffMax)
	for {
		if !outage.Sleep(ctx, bo.Next()) {
			return err
		}
		if ferr := bus.CheckFence(ctx); ferr != nil { // the wait may have outlasted the partitions' ownership
			return ferr
		}
		err = c.b.retry(ctx, func() error { return c.b.commitOffsets(ctx, c.group, c.topic, offs) })
		var inUse *GroupInUseError
		if !errors.As(err, &inUse) {
			if err == nil {
				c.log.Info("kafkabus: offset commit accepted: the group has no members any more", "waited", time.Since(start).Round(time.Millisecond))
			}
			return err
		}
		c.refused.Inc()
	}
}

// commitOffsets commits offs on topic for group as a simple consumer (generation -1, no member id), in one
// request. A refusal because the group has members is a *GroupInUseError.
func (b *Bus) commitOffsets(ctx context.Context, group, topic string, offs []kafka.OffsetCommit) error {
	resp, err := b.client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
		GroupID:      group,
		GenerationID: -1, // a simple consumer: no group membership, explicit partitions
		Topics:       map[string][]kafka.OffsetCommit{topic: offs},
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range resp.Topics[topic] {
		if p.Error == nil {
			continue
		}
		if errors.Is(p.Error, kafka.UnknownMemberId) || errors.Is(p.Error, kafka.IllegalGeneration) {
			return &GroupInUseError{Group: group, Err: fmt.Errorf("partition %d: %w", p.Partition, p.Error)}
		}
		errs = append(errs, fmt.Errorf("partition %d: %w", p.Partition, p.Error))
	}
	return errors.Join(errs...)
}

// GroupInUseError says that Kafka refused an offset commit because the consumer group has members. Frontier's
// consumers never join their offset groups: they commit as simple consumers, which Kafka accepts only while a
// group has no members. A consumer that joins the group (Frontera's workers do, under the same names, for the
// same or another crawl's topics on this Kafka cluster) makes every such commit fail until it leaves. Commit
// tries again until it does (logged when the wait starts and when it ends, each refusal counted in
// frontier_bus_commits_refused_total); AcceptLoss gives up.
type GroupInUseError struct {
	Group string
	Err   error // Kafka's answer (UNKNOWN_MEMBER_ID)
}

func (e *GroupInUseError) Error() string {
	return fmt.Sprintf("consumer group %q has members (another consumer joined it, as Frontera's workers do under "+
		"the same names), and Kafka refuses the commits of Frontier's consumers, which do not join their groups, "+
		"until the group is empty: stop that consumer or give it another group: %v", e.Group, e.Err)
}

func (e *GroupInUseError) Unwrap() error { return e.Err }
