package kafkabus

// Retention: what a consumer does when the offset it must read next was deleted by the topic's retention, and
// how an operator accepts that loss. A silent jump to the earliest offset held would lose every URL in the
// deleted range without a trace (a strategy worker down for a weekend, a 24 h retention); so the consumer
// stops with an *OffsetLostError, the loss is exported as frontier_bus_offsets_lost_messages, and the
// operator either restores the data or accepts the loss with AcceptLoss (frontierctl accept-loss).

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
)

// OffsetLostError says that a consumer group's next offset of a partition lies below the partition's log start
// offset: the messages in [Committed, LogStart) were deleted (retention, or kafka-delete-records) before the
// group consumed them. errors.Is(err, bus.ErrOffsetLost) matches it.
type OffsetLostError struct {
	Stream    bus.Stream
	Topic     string
	Partition int
	Group     string
	Committed int64 // the offset the group was to read next (its committed offset, or where the consumer was)
	LogStart  int64 // the first offset the partition still holds
}

// Lost is how many messages were deleted unread.
func (e *OffsetLostError) Lost() int64 { return e.LogStart - e.Committed }

func (e *OffsetLostError) Error() string {
	return fmt.Sprintf("kafkabus: %s: topic %s partition %d: group %q was to read offset %d, but the log now starts at %d: "+
		"%d messages (offsets %d to %d) fell out of retention before they were consumed; "+
		"restore them or accept the loss with `frontierctl accept-loss --stream %s --group %s`",
		e.Stream, e.Topic, e.Partition, e.Group, e.Committed, e.LogStart, e.Lost(), e.Committed, e.LogStart-1, e.Stream, e.Group)
}

func (e *OffsetLostError) Is(target error) bool { return target == bus.ErrOffsetLost }

// Loss is one partition whose committed offset AcceptLoss moved to the log start.
type Loss struct {
	Partition int
	Committed int64 // the group's committed offset before
	LogStart  int64 // the group's committed offset now
}

// Losses returns, per partition of stream s, where group's committed offset lies below the log start offset
// (messages deleted unread). Partitions the group never committed are not losses: a new consumer starts at the
// earliest offset held. It also sets frontier_bus_offsets_lost_messages for every partition.
func (b *Bus) Losses(ctx context.Context, s bus.Stream, group string) ([]Loss, error) {
	sc, err := b.stream(s)
	if err != nil {
		return nil, err
	}
	parts := make([]int, sc.Partitions)
	reqs := make([]kafka.OffsetRequest, sc.Partitions)
	for p := range parts {
		parts[p] = p
		reqs[p] = kafka.FirstOffsetOf(p)
	}
	first := map[int]int64{}
	err = b.retry(ctx, func() error {
		resp, err := b.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{sc.Topic: reqs}})
		if err != nil {
			return err
		}
		for _, po := range resp.Topics[sc.Topic] {
			if errors.Is(po.Error, kafka.UnknownTopicOrPartition) {
				return permanent{fmt.Errorf("topic %q does not exist on %s: %w", sc.Topic, b.addr, po.Error)}
			}
			if po.Error != nil {
				return fmt.Errorf("partition %d: %w", po.Partition, offsetsError(po.Error))
			}
			first[po.Partition] = po.FirstOffset
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kafkabus: log start offsets of %s: %w", sc.Topic, err)
	}
	committed, err := b.committed(ctx, sc.Topic, group, parts)
	if err != nil {
		return nil, err
	}
	var out []Loss
	for _, p := range parts {
		lost := int64(0)
		if c := committed[p]; c >= 0 && c < first[p] {
			out = append(out, Loss{Partition: p, Committed: c, LogStart: first[p]})
			lost = first[p] - c
		}
		b.metrics.lost.WithLabelValues(string(s), group, strconv.Itoa(p)).Set(float64(lost))
	}
	return out, nil
}

// AcceptLoss commits, for every partition of stream s where group's committed offset fell out of retention,
// the partition's log start offset: the group's consumers then start at the earliest message still held, and
// the deleted ones are given up. It returns what it moved. Run it only while no consumer of the group runs (a
// consumer that hit the loss has stopped).
func (b *Bus) AcceptLoss(ctx context.Context, s bus.Stream, group string) ([]Loss, error) {
	losses, err := b.Losses(ctx, s, group)
	if err != nil || len(losses) == 0 {
		return nil, err
	}
	sc, _ := b.stream(s)
	offs := make([]kafka.OffsetCommit, len(losses))
	for i, l := range losses {
		offs[i] = kafka.OffsetCommit{Partition: l.Partition, Offset: l.LogStart}
	}
	// A *GroupInUseError is not retried: the group's consumers still run, and an operator's command does not
	// wait for them.
	err = b.retry(ctx, func() error { return b.commitOffsets(ctx, group, sc.Topic, offs) })
	if err != nil {
		return nil, fmt.Errorf("kafkabus: accept loss: commit %s offsets %s for group %q: %w", sc.Topic, offsetList(offs), group, err)
	}
	for _, l := range losses {
		b.metrics.lost.WithLabelValues(string(s), group, strconv.Itoa(l.Partition)).Set(0)
		b.log.Warn("kafkabus: loss accepted: committed offset moved to the log start", "stream", string(s), "topic", sc.Topic,
			"group", group, "partition", l.Partition, "committed", l.Committed, "log_start", l.LogStart, "lost", l.LogStart-l.Committed)
	}
	return losses, nil
}
