// Package bus carries Frontier's three streams (docs/architecture.md, "Streams"): the spider log, the scoring
// log and the spider feed, plus the optional control stream. Messages are keyed bytes; the codec package gives
// them meaning. The kafka-go implementation lives in bus/kafkabus, the durable in-process one (standalone mode)
// in bus/pebblebus, a memory-only one (unit tests) in bus/membus, and one conformance suite (bus/bustest) holds
// them to the same contract.
//
// Delivery is at least once: a consumer re-delivers everything after its last commit, and the caller commits
// only after the effects of a batch are durable (docs/architecture.md, invariant 2: nothing is lost).
//
// The topology (topology.go) is declared once, as data: each stream's key, partitioner and consumer groups, and
// which partitions each group reads. Roles open producers by stream name from it ([OpenProducer]), and lag
// reports and idle checks read its groups ([LagGroups]).
//
// A role opens its streams through a [Bus] (kafkabus.Bus in a cluster, pebblebus.Bus in standalone mode,
// membus.Bus in unit tests), so the same worker code runs on both. Consumers own explicit partitions: a strategy worker reads its one
// spider-log partition, a spider its one feed partition, the DB worker every partition. A consumer group that has
// never committed starts at the earliest offset still held, so a new group reads the whole backlog (Frontera
// started at the latest offset and silently skipped it).
//
// Messages the caller cannot decode go through [Decode]: each is counted and logged with its partition and offset
// by the consumer (see [MalformedReporter]) and skipped, while the rest of the batch is processed; it is committed
// with the batch, so it is not redelivered forever.
//
// This package imports no Kafka client; only bus/kafkabus does. It imports package partition for the declared
// partitioners, which no other package outside bus/ may do.
package bus

import (
	"context"
	"errors"
	"fmt"
)

// Stream names one of Frontier's streams.
type Stream string

// The streams; topology.go declares how each is keyed, partitioned and read.
const (
	SpiderLog  Stream = "spider-log"  // spiders → strategy workers and DB worker; key: the host's domain fingerprint
	ScoringLog Stream = "scoring-log" // strategy workers → DB worker; key: the target host
	SpiderFeed Stream = "spider-feed" // DB worker → spider p, partition p; key: the hostname
	// Control carries run-time commands (package control) from frontierctl to every DB worker and spider; one
	// partition. It is not one of Streams: a bus that does not configure it has no run-time control.
	Control Stream = "control"
)

// Message is one record of a stream.
type Message struct {
	Key   []byte
	Value []byte
	// Partition and Offset are set on consumed messages. On produced messages Partition is ignored unless the
	// producer was built without a Partitioner, in which case it is used as is.
	Partition int
	Offset    int64
}

// Partitioner maps a message key to a partition in [0, n). It is computed by Frontier (package partition),
// never by the Kafka client, so that the partition agrees with Frontera's.
type Partitioner func(key []byte, n int) int

// Producer writes to one stream. Send blocks until every message is acknowledged by the bus (or the context
// ends) and returns an error if any was not; messages with a nil error were delivered. Safe for concurrent use.
// The caller closes it.
type Producer interface {
	Send(ctx context.Context, msgs ...Message) error
	Close() error
}

// Consumer reads explicit partitions of one stream in one consumer group.
//
// Fetch returns up to max messages, waiting until at least one is available or the context ends. Commit
// records that every message up to and including the given ones (per partition) is durable; after a restart
// the group resumes after the last commit. Not safe for concurrent use: one goroutine fetches and commits.
// The caller closes it.
type Consumer interface {
	Fetch(ctx context.Context, max int) ([]Message, error)
	Commit(ctx context.Context, msgs []Message) error
	Close() error
}

// LagReader reports, per partition of a stream, latest offset minus the group's committed offset: how much a
// consumer group has not yet confirmed. The DB worker uses it on the spider feed for flow control
// (docs/architecture.md, invariant 4: flow control without stalls).
type LagReader interface {
	Lag(ctx context.Context, stream Stream, group string) (map[int]int64, error)
}

// ErrClosed is returned by operations on a closed producer or consumer.
var ErrClosed = errors.New("bus: closed")

// Streams lists the three streams in a fixed order.
var Streams = []Stream{SpiderLog, ScoringLog, SpiderFeed}

// Bus opens producers and consumers of the streams. kafkabus.Bus, pebblebus.Bus and membus.Bus implement it; the
// conformance suite in bus/bustest holds them to the same contract. Roles open producers through OpenProducer,
// which passes the stream's declared partitioner. Safe for concurrent use. Producers and consumers it
// opens are closed by their callers, before the Bus itself.
type Bus interface {
	// Producer opens a producer of stream. With a non-nil p, each message goes to partition
	// p(key, Partitions(stream)); with a nil p, to its own Message.Partition.
	Producer(ctx context.Context, stream Stream, p Partitioner) (Producer, error)
	// Consumer opens a consumer of the given partitions of stream in group. It starts at the group's committed
	// offset of each partition, or at the earliest offset held if the group never committed there.
	Consumer(ctx context.Context, stream Stream, group string, partitions []int) (Consumer, error)
	// Partitions is the partition count of stream.
	Partitions(stream Stream) int
	LagReader
}

// MalformedReporter is implemented by consumers that count and log the messages their caller could not decode.
// Every consumer in bus/kafkabus, bus/pebblebus and bus/membus implements it; a wrapping consumer should forward it.
type MalformedReporter interface {
	// Malformed records that m could not be decoded because of err: a counter is incremented and the stream,
	// group, partition and offset are logged. It never fails.
	Malformed(m Message, err error)
}

// Decode decodes msgs in order with decode and returns the decoded values of the messages it accepts. A message
// decode rejects is skipped and reported to c's Malformed method (when c implements [MalformedReporter]); the
// others are still decoded. Commit the whole batch, malformed messages included, once the values are durable, so
// a malformed message is not redelivered after a restart.
func Decode[T any](c Consumer, msgs []Message, decode func(Message) (T, error)) []T {
	out := make([]T, 0, len(msgs))
	rep, _ := c.(MalformedReporter)
	for _, m := range msgs {
		v, err := decode(m)
		if err != nil {
			if rep != nil {
				rep.Malformed(m, err)
			}
			continue
		}
		out = append(out, v)
	}
	return out
}

// CheckPartitions reports an error naming stream if partitions is empty, has a duplicate, or names a partition
// outside [0, n). Implementations of [Bus] use it to validate Consumer's arguments.
func CheckPartitions(stream Stream, partitions []int, n int) error {
	if len(partitions) == 0 {
		return fmt.Errorf("bus: %s: no partitions to consume", stream)
	}
	seen := make(map[int]bool, len(partitions))
	for _, p := range partitions {
		if p < 0 || p >= n {
			return fmt.Errorf("bus: %s: partition %d out of range [0, %d)", stream, p, n)
		}
		if seen[p] {
			return fmt.Errorf("bus: %s: partition %d listed twice", stream, p)
		}
		seen[p] = true
	}
	return nil
}

// CommitOffsets returns, per partition, the offset to commit for msgs: one past the highest offset among them
// (Kafka's convention: the committed offset is the next one to read).
func CommitOffsets(msgs []Message) map[int]int64 {
	next := make(map[int]int64)
	for _, m := range msgs {
		if o, ok := next[m.Partition]; !ok || m.Offset+1 > o {
			next[m.Partition] = m.Offset + 1
		}
	}
	return next
}
