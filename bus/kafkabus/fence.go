package kafkabus

// Fencing: a process that lost its partitions cannot write for them. Own puts a fence on the context of the
// work it runs (bus.WithFence); Producer.Send and Consumer.Commit call it before they write. The fence asks the
// ownership group's coordinator whether this member still belongs to the generation that gave it its
// partitions (an OffsetCommit in that generation, see probe). The group's own heartbeats run on a timer, so a
// process stopped past its session (SIGSTOP, a long pause) and resumed mid-batch would otherwise send its batch
// before noticing that a standby took over: the fence asks first, and refuses.
//
// What the fence cannot do: a write is not conditional on the check (Kafka's produce request carries no group
// generation, and kafka-go has no transactional producer whose epoch would fence it), so a process stopped
// between a passing check and its produce request still writes that request once when resumed. The window is
// one produce request (with kafka-go's linger before it), against the whole batch (HBase reads, encoding, a
// send) without the fence: under a fence kafka-go makes a single try, and Send checks again before each retry
// of its own (Producer.fenced). Nor can it undo a write that landed: a DB worker stopped after its Send and
// before the queue's Ack leaves the batch in the queue, and the worker that takes over sends it again; the
// new owner of a scoring-log partition replays what the old one scheduled and had not committed (delivery is
// at least once).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/internal/outage"
)

// fenceFresh is how long a passing check stands for the writes that follow it, so a busy process asks at most
// a few times a second. It is far below the session timeout, the earliest the group can give this member's
// partitions away after a check confirmed its membership, and it is measured on the monotonic clock,
// which runs on while the process is stopped: a process resumed after SIGSTOP always asks again.
const fenceFresh = 200 * time.Millisecond

// memberGen is a member's identity in one generation of its ownership group.
type memberGen struct {
	id     int32
	member string
}

// fence checks one member's ownership of the partitions its work was given.
type fence struct {
	b     *Bus
	group string // the ownership group (with its topic suffix)
	topic string
	parts []int
	// eager: the DB workers' hand-over, where any new generation (a rebalance in progress, a generation after
	// this one) may move the partitions, so both fence. Otherwise (hold: spiders, strategy workers) the
	// balancer keeps a live previous owner, so a rebalance does not fence, a newer generation is waited for
	// (Own updates gen when it confirms the partitions), and only losing the membership fences.
	eager    bool
	log      *slog.Logger
	onFenced func() // stops the work; called once
	gen      atomic.Pointer[memberGen]
	released atomic.Bool // the Owner took the partitions back
	fenced   atomic.Pointer[error]

	mu sync.Mutex
	ok time.Time // last passing check
}

func newFence(b *Bus, group, topic string, parts []int, eager bool, gen *kafka.Generation, log *slog.Logger, onFenced func()) *fence {
	f := &fence{b: b, group: group, topic: topic, parts: parts, eager: eager, log: log, onFenced: onFenced}
	f.setGen(gen)
	return f
}

func (f *fence) setGen(gen *kafka.Generation) {
	f.gen.Store(&memberGen{id: gen.ID, member: gen.MemberID})
}

// fence records the loss of ownership: every later check fails with err. It is counted in
// frontier_bus_fenced_total (the FrontierOwnershipFenced alert of deploy/monitoring).
func (f *fence) fence(why error) error {
	g := f.gen.Load()
	err := fmt.Errorf("kafkabus: ownership group %q, generation %d: partitions %v are no longer this process's (%v): %w",
		f.group, g.id, f.parts, why, bus.ErrFenced)
	if f.fenced.CompareAndSwap(nil, &err) {
		f.b.metrics.fenced.Inc()
		f.log.Warn("fenced: this process lost its partitions; refusing to write for them", "partitions", f.parts,
			"generation", g.id, "why", why)
		f.onFenced()
	}
	return *f.fenced.Load()
}

// check returns nil while this member still owns its partitions, and an error matching bus.ErrFenced once it
// does not. Transient errors (Kafka down, the coordinator moving) are retried until ctx ends: a write waits
// for the answer rather than guessing.
func (f *fence) check(ctx context.Context) error {
	if err := f.fenced.Load(); err != nil {
		return *err
	}
	if f.released.Load() {
		return f.fence(errors.New("the group assigned them elsewhere"))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fenced.Load(); err != nil {
		return *err
	}
	if !f.ok.IsZero() && time.Since(f.ok) < fenceFresh {
		return nil
	}
	bo := outage.NewBackoff(f.b.cfg.Consumer.RetryBackoff, f.b.cfg.Consumer.RetryBackoffMax)
	for {
		if f.released.Load() {
			return f.fence(errors.New("the group assigned them elsewhere"))
		}
		err := f.probe(ctx, f.gen.Load())
		switch {
		case err == nil, !f.eager && errors.Is(err, kafka.RebalanceInProgress):
			f.ok = time.Now()
			return nil
		case errors.Is(err, kafka.UnknownMemberId), errors.Is(err, kafka.FencedInstanceID),
			f.eager && (errors.Is(err, kafka.IllegalGeneration) || errors.Is(err, kafka.RebalanceInProgress)):
			return f.fence(err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("kafkabus: ownership group %q: cannot confirm ownership of partitions %v before writing: %w", f.group, f.parts, err)
		}
		d := bo.Next()
		f.log.Debug("kafkabus: fence: ownership not confirmed yet; asking again", "err", err, "retry_in", d)
		if !outage.Sleep(ctx, d) {
			return fmt.Errorf("kafkabus: ownership group %q: cannot confirm ownership of partitions %v before writing: %w", f.group, f.parts, err)
		}
	}
}

// probe asks the coordinator whether g is a member of the group's current generation, with an OffsetCommit
// in g of offset 0 of the work's first partition to the ownership group (whose offsets nothing reads): the
// coordinator validates the member and generation before it writes, and answers UNKNOWN_MEMBER_ID or
// ILLEGAL_GENERATION otherwise. (A Heartbeat would say the same, but kafka-go's Client.Heartbeat decodes
// the answer of versions 1 and up with its fields swapped, so its error code always reads 0.)
func (f *fence) probe(ctx context.Context, g *memberGen) error {
	resp, err := f.b.client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
		GroupID: f.group, GenerationID: int(g.id), MemberID: g.member,
		Topics: map[string][]kafka.OffsetCommit{f.topic: {{Partition: f.parts[0], Offset: 0}}},
	})
	if err != nil {
		return err
	}
	for _, p := range resp.Topics[f.topic] {
		if p.Error != nil {
			return p.Error
		}
	}
	return nil
}
