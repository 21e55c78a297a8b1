package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/bustest"
)

func TestOffsetLostKfake(t *testing.T) {
	testOffsetLost(t, newKfake(t))
}

// testOffsetLost: a group commits offset 3 of 10 messages, the broker deletes the messages below offset 7; a
// consumer of the group then fails with an error naming the topic, the partition and both offsets (never
// jumping silently to 7), the loss shows in the metrics and Losses, and only AcceptLoss lets the group go on,
// from offset 7. A group that never committed is no loss: it starts at the log start.
func testOffsetLost(t *testing.T, brokers []string) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	b := openTestBus(t, brokers, map[bus.Stream]int{bus.SpiderLog: 2})
	reg := prometheus.NewRegistry()
	b.metrics = newMetrics(reg)
	topic := b.cfg.SpiderLog.Topic
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := DeleteTopics(ctx, brokers, []string{b.cfg.SpiderLog.Topic, b.cfg.ScoringLog.Topic, b.cfg.SpiderFeed.Topic}); err != nil {
			t.Log(err)
		}
	})
	// The topic's own retention, set on the existing topic (what frontierctl topics does to a topic made
	// before retention was configured): an hour, so the broker's retention thread deletes nothing during the
	// test, and small segments, so that deleting records cuts whole segments as retention would.
	want := RetentionConfigs(time.Hour)
	want["segment.bytes"] = "1024"
	if err := EnsureTopics(ctx, brokers, []TopicSpec{{Name: topic, Partitions: 2, Configs: want}}); err != nil {
		t.Fatal(err)
	}
	have, err := TopicConfigs(ctx, b.client, topic, []string{"retention.ms", "retention.bytes", "cleanup.policy", "segment.bytes"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Fatalf("topic configs %v, want %v", have, want)
	}
	p, err := b.Producer(ctx, bus.SpiderLog, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := p.Send(ctx, bus.Message{Key: []byte("k"), Value: fmt.Appendf(nil, "m%d", i), Partition: 1}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	const group = "retention-test"
	bustest.ConsumeAndCommit(t, ctx, b, bus.SpiderLog, group, []int{0, 1}, 3)

	bustest.DeleteRecords(t, ctx, brokers, topic, 1, 7)

	losses, err := b.Losses(ctx, bus.SpiderLog, group)
	if err != nil {
		t.Fatal(err)
	}
	if len(losses) != 1 || losses[0] != (Loss{Partition: 1, Committed: 3, LogStart: 7}) {
		t.Fatalf("Losses = %+v, want partition 1 committed 3 log start 7", losses)
	}
	c, err := b.Consumer(ctx, bus.SpiderLog, group, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // and it stays failed
		msgs, err := c.Fetch(ctx, 10)
		var lost *OffsetLostError
		if !errors.Is(err, bus.ErrOffsetLost) || !errors.As(err, &lost) {
			t.Fatalf("Fetch past retention = %d messages, %v; want an OffsetLostError", len(msgs), err)
		}
		want := OffsetLostError{Stream: bus.SpiderLog, Topic: topic, Partition: 1, Group: group, Committed: 3, LogStart: 7}
		if *lost != want {
			t.Fatalf("error %+v, want %+v", *lost, want)
		}
		for _, s := range []string{"topic " + topic + " partition 1", "read offset 3", "starts at 7", "4 messages (offsets 3 to 6)", "frontierctl accept-loss"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not say %q", err, s)
			}
		}
	}
	c.Close()
	if n := testutil.ToFloat64(b.metrics.lostStops.WithLabelValues("spider-log", group)); n != 1 {
		t.Errorf("frontier_bus_offset_lost_total = %v, want 1", n)
	}
	if n := testutil.ToFloat64(b.metrics.lost.WithLabelValues("spider-log", group, "1")); n != 4 {
		t.Errorf("frontier_bus_offsets_lost_messages = %v, want 4", n)
	}

	// A new group is no loss: it starts at the log start.
	fresh, err := b.Consumer(ctx, bus.SpiderLog, "retention-test-fresh", []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if msgs, err := fresh.Fetch(ctx, 1); err != nil || msgs[0].Offset != 7 {
		t.Fatalf("a new group's first fetch = %v, %v; want offset 7", msgs, err)
	}
	fresh.Close()

	accepted, err := b.AcceptLoss(ctx, bus.SpiderLog, group)
	if err != nil || len(accepted) != 1 || accepted[0] != (Loss{Partition: 1, Committed: 3, LogStart: 7}) {
		t.Fatalf("AcceptLoss = %+v, %v", accepted, err)
	}
	if again, err := b.AcceptLoss(ctx, bus.SpiderLog, group); err != nil || len(again) != 0 {
		t.Fatalf("second AcceptLoss = %+v, %v; want nothing to accept", again, err)
	}
	if n := testutil.ToFloat64(b.metrics.lost.WithLabelValues("spider-log", group, "1")); n != 0 {
		t.Errorf("frontier_bus_offsets_lost_messages after accept = %v, want 0", n)
	}
	c, err = b.Consumer(ctx, bus.SpiderLog, group, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var rest []string
	for len(rest) < 3 {
		msgs, err := c.Fetch(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			rest = append(rest, string(m.Value))
		}
	}
	if strings.Join(rest, ",") != "m7,m8,m9" {
		t.Fatalf("after AcceptLoss the group reads %v, want m7,m8,m9", rest)
	}
}
