//go:build integration

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/bustest"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/state"
	_ "github.com/frontiercrawl/frontier/strategy/all"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// TestStrategyWorkerPastRetention: a strategy worker whose committed spider-log offset fell out of retention
// (the broker deleted seeds it had not consumed) stops with an error naming the topic, the partition and the
// offsets lost, instead of skipping to the oldest message held; after `accept-loss` (Bus.AcceptLoss) it goes
// on from there.
func TestStrategyWorkerPastRetention(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	log := frontiertest.Logger(t)
	env := cluster.Topics(t, "retention", cluster.Partitions{SpiderLog: 1, ScoringLog: 1, SpiderFeed: 1})
	b := env.Bus(t, "retention", log, nil)
	c := codec.Msgpack{}
	id := cluster.Identity(t)

	// 10 add_seeds events on the spider log; the strategy worker's group has consumed the first 3.
	out, err := bus.OpenProducer(ctx, b, bus.SpiderLog)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		u := fmt.Sprintf("http://host%d.example/", i)
		fp, err := id.Fingerprint(u)
		if err != nil {
			t.Fatal(err)
		}
		r := &frontier.Request{URL: u, Method: "GET"}
		r.SetMetaFingerprint(fp)
		v, err := c.EncodeMessage(&frontier.AddSeeds{Seeds: []*frontier.Request{r}})
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Send(ctx, bus.Message{Key: []byte("k"), Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	out.Close()
	bustest.ConsumeAndCommit(t, ctx, b, bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog, []int{0}, 3)
	// Retention deletes offsets 0-6 (DeleteRecords: what retention does, at once).
	bustest.DeleteRecords(t, ctx, env.Kafka.Brokers, env.Kafka.SpiderLog.Topic, 0, 7)

	run := func() error {
		w, err := strategyworker.New(strategyworker.DefaultConfig(), strategyworker.Deps{Bus: b, Codec: c, States: state.NewMemory(),
			Domains: metadata.NewMemoryDomains(), Fingerprint: id.Fingerprint, Partition: 0, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithTimeout(ctx, 30*time.Second)
		defer stop()
		return w.Run(rctx)
	}
	err = run()
	var lost *kafkabus.OffsetLostError
	if !errors.Is(err, bus.ErrOffsetLost) || !errors.As(err, &lost) {
		t.Fatalf("strategy worker past retention returned %v, want an OffsetLostError", err)
	}
	for _, s := range []string{"topic " + env.Kafka.SpiderLog.Topic + " partition 0", "read offset 3", "starts at 7", "4 messages (offsets 3 to 6)"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	t.Logf("strategy worker stopped: %v", err)

	// The operator accepts the loss; the worker then reads 7-9 and commits them.
	if acc, err := b.AcceptLoss(ctx, bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog); err != nil || len(acc) != 1 {
		t.Fatalf("AcceptLoss = %v, %v", acc, err)
	}
	go func() {
		cluster.WaitFor(t, ctx, "the strategy worker to consume offsets 7 to 9", func() bool {
			lag, err := b.Lag(ctx, bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog)
			return err == nil && lag[0] == 0
		})
		cancel()
	}()
	if err := run(); err != nil && ctx.Err() == nil {
		t.Fatalf("after accept-loss: %v", err)
	}
}
