//go:build integration

package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
)

// TestCommitWhileGroupInUse: a consumer that joins a group of the same name (as Frontera's workers join
// sw-spider-log, dbw-spider-log and dbw-scoring-log), here on another topic as another crawl's would, makes Kafka
// refuse the simple-consumer commits of Frontier's consumer (GroupInUseError, naming the group). The commit
// tries again, counting the refusals, without reporting Kafka unreachable, and lands once the member leaves.
func TestCommitWhileGroupInUse(t *testing.T) {
	brokers := kafkaBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	b := realBus(t, brokers, nil)
	other := realBus(t, brokers, nil) // another crawl's topics on the same cluster
	group := fmt.Sprintf("in-use-%d", time.Now().UnixNano())

	p, err := b.Producer(ctx, bus.ScoringLog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Send(ctx, bus.Message{Value: []byte("m")}); err != nil {
		t.Fatal(err)
	}
	c, err := b.Consumer(ctx, bus.ScoringLog, group, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.Fetch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}

	member, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: group, Brokers: brokers, Topics: []string{other.cfg.ScoringLog.Topic},
		HeartbeatInterval: 500 * time.Millisecond, SessionTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	if _, err := member.Next(ctx); err != nil { // joined: the group has a member now
		t.Fatal(err)
	}

	var inUse *GroupInUseError
	err = b.commitOffsets(ctx, group, b.cfg.ScoringLog.Topic, []kafka.OffsetCommit{{Partition: 0, Offset: 1}})
	if !errors.As(err, &inUse) || inUse.Group != group {
		t.Fatalf("a simple-consumer commit while the group has a member: %v, want a *GroupInUseError for %q", err, group)
	}
	t.Logf("refused: %v", err)

	done := make(chan error, 1)
	go func() { done <- c.Commit(ctx, got) }()
	for testutil.ToFloat64(c.(*Consumer).refused) < 2 { // the commit waits, and tries again
		select {
		case err := <-done:
			t.Fatalf("Commit returned %v while the group had a member, want it to wait", err)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := b.Unreachable(); err != nil { // Kafka answers: no outage, whatever the fetches and sends do
		t.Errorf("while the commit waits for the group the bus reports %v", err)
	}
	if err := member.Close(); err != nil { // leaves the group: it is empty again
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Commit after the member left: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("Commit still waiting after the member left: %v", b.Unreachable())
	}
	if err := b.Unreachable(); err != nil {
		t.Errorf("after the commit the bus still reports %v", err)
	}
	off, err := b.committed(ctx, b.cfg.ScoringLog.Topic, group, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if off[0] != 1 {
		t.Errorf("committed offset %d, want 1", off[0])
	}
}
