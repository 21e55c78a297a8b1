//go:build integration

package kafkabus

import (
	"context"
	"fmt"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
)

// BenchmarkIntegrationFenceCheck: what the ownership fence costs a write, on the real Kafka. probe is a check
// that asks the coordinator (one OffsetCommit in the member's generation): the cost of the first write after
// fenceFresh (200 ms) and of the first after a process resumes. fresh is a check answered from the last
// passing one, the cost of every other write. So a worker writing more often than every 200 ms (a busy DB
// worker: a send, an HBase write and a commit per batch) pays at most one probe per 200 ms of work. Run it
// with a count (-benchtime 200x): a run longer than 200 ms mixes probes into fresh.
func BenchmarkIntegrationFenceCheck(b *testing.B) {
	brokers := kafkaBrokers(b)
	kb := realBus(b, brokers, map[bus.Stream]int{bus.SpiderFeed: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := kb.cfg.SpiderFeed.Topic
	group := fmt.Sprintf("fence-bench-%d", time.Now().UnixNano())
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{ID: group, Brokers: brokers, Topics: []string{topic},
		GroupBalancers: []kafka.GroupBalancer{&ownerBalancer{}}, HeartbeatInterval: time.Second, SessionTimeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer cg.Close()
	gen, err := cg.Next(ctx)
	if err != nil {
		b.Fatal(err)
	}
	f := newFence(kb, group, topic, []int{0}, true, gen, kb.log, func() {})
	b.Run("probe", func(b *testing.B) {
		for b.Loop() {
			if err := f.probe(ctx, f.gen.Load()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/check")
	})
	b.Run("fresh", func(b *testing.B) {
		if err := f.check(ctx); err != nil { // one probe; the loop's checks stand on it
			b.Fatal(err)
		}
		for b.Loop() {
			if err := f.check(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/check")
	})
}
