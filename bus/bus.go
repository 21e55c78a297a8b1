// Package bus carries Frontier's three streams (DESIGN.md §1): the spider log, the scoring log and the spider
// feed. Messages are keyed bytes; the codec package gives them meaning. The kafka-go implementation lives in
// bus/kafkabus, the in-process one (standalone mode, unit tests) in bus/membus, and one conformance suite
// (bus/bustest) holds both to the same contract.
//
// Delivery is at least once: a consumer re-delivers everything after its last commit, and the caller commits
// only after the effects of a batch are durable (DESIGN.md §1, invariant 2).
//
// This package imports no Kafka client; only bus/kafkabus does.
package bus

import (
	"context"
	"errors"
)

// Stream names one of Frontier's streams.
type Stream string

// The three streams of DESIGN.md §1.
const (
	SpiderLog  Stream = "spider-log"  // spiders → strategy workers and DB worker; key: the host's domain fingerprint
	ScoringLog Stream = "scoring-log" // strategy workers → DB worker; key: the target host
	SpiderFeed Stream = "spider-feed" // DB worker → spider p, partition p; key: the hostname
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
// (DESIGN.md §1, invariant 4).
type LagReader interface {
	Lag(ctx context.Context, stream Stream, group string) (map[int]int64, error)
}

// ErrClosed is returned by operations on a closed producer or consumer.
var ErrClosed = errors.New("bus: closed")
