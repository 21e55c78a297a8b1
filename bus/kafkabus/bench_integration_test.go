//go:build integration

package kafkabus

// Throughput through the real broker, bus/kafkabus beside plain kafka-go with the same settings:
//
//	export $(deploy/env)
//	go test -tags integration -run '^$' -bench . -benchtime 20x -count 5 ./bus/kafkabus/
//
// Messages are feed-sized: a 20-byte host key and a 200-byte value. Results: bench/results/bus.md.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/partition"
)

const (
	benchPartitions = 4
	benchSendBatch  = 2000    // messages per Send / WriteMessages call
	benchConsume    = 400_000 // messages read per consume iteration
	benchValueSize  = 200
)

func benchMessages(n int) []bus.Message {
	msgs := make([]bus.Message, n)
	val := make([]byte, benchValueSize)
	for i := range val {
		val[i] = 'a' + byte(i%26)
	}
	for i := range msgs {
		msgs[i] = bus.Message{Key: fmt.Appendf(nil, "host-%06d.example", i%5000), Value: val}
	}
	return msgs
}

func benchBus(b *testing.B) *Bus {
	brokers := kafkaBrokers(b)
	return realBus(b, brokers, map[bus.Stream]int{bus.SpiderFeed: benchPartitions})
}

// rawWriter is a kafka.Writer with the settings NewProducer gives its own.
func rawWriter(bb *Bus, tr *kafka.Transport) *kafka.Writer {
	pc := bb.cfg.Producer
	comp, _ := compression(pc.Compression)
	ack, _ := acks(pc.Acks)
	n := bb.cfg.SpiderFeed.Partitions
	return &kafka.Writer{
		Addr: kafka.TCP(bb.cfg.Brokers...), Topic: bb.cfg.SpiderFeed.Topic,
		Balancer:    kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return partition.Crc32Name(m.Key, n) }),
		MaxAttempts: pc.MaxAttempts, WriteBackoffMin: pc.RetryBackoff, WriteBackoffMax: pc.RetryBackoffMax,
		BatchSize: pc.BatchSize, BatchBytes: pc.BatchBytes, BatchTimeout: pc.Linger,
		ReadTimeout: bb.cfg.RequestTimeout, WriteTimeout: pc.WriteTimeout,
		RequiredAcks: ack, Compression: comp, Transport: tr,
	}
}

// BenchmarkProduce sends batches of benchSendBatch messages, from 1 and from 4 goroutines at once (Send is
// synchronous, so concurrent senders are how a role keeps several batches in flight).
func BenchmarkProduce(b *testing.B) {
	msgs := benchMessages(benchSendBatch)
	kms := make([]kafka.Message, len(msgs))
	for i, m := range msgs {
		kms[i] = kafka.Message{Key: m.Key, Value: m.Value}
	}
	for _, senders := range []int{1, 4} {
		b.Run(fmt.Sprintf("kafkabus/senders=%d", senders), func(b *testing.B) {
			bb := benchBus(b)
			p, err := bb.Producer(b.Context(), bus.SpiderFeed, partition.Crc32Name)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			benchSend(b, senders, func() error { return p.Send(b.Context(), msgs...) })
		})
		b.Run(fmt.Sprintf("raw-kafka-go/senders=%d", senders), func(b *testing.B) {
			bb := benchBus(b)
			tr := &kafka.Transport{}
			defer tr.CloseIdleConnections()
			w := rawWriter(bb, tr)
			defer w.Close()
			benchSend(b, senders, func() error { return w.WriteMessages(b.Context(), kms...) })
		})
	}
}

// benchSend runs send from senders goroutines per iteration, after one warm-up call (leaders, connections).
func benchSend(b *testing.B, senders int, send func() error) {
	if err := send(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(senders * benchSendBatch * (benchValueSize + 17)))
	start := time.Now()
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make(chan error, senders)
		for range senders {
			wg.Go(func() {
				if err := send(); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*senders*benchSendBatch)/time.Since(start).Seconds(), "msgs/s")
}

// fillFeed writes benchConsume messages to the bus's feed topic.
func fillFeed(b *testing.B, bb *Bus) {
	b.Helper()
	p, err := bb.Producer(b.Context(), bus.SpiderFeed, partition.Crc32Name)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	msgs := benchMessages(benchSendBatch)
	for range benchConsume / benchSendBatch {
		if err := p.Send(b.Context(), msgs...); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConsume(b *testing.B) {
	b.Run("kafkabus", func(b *testing.B) {
		bb := benchBus(b)
		fillFeed(b, bb)
		parts := []int{0, 1, 2, 3}
		b.SetBytes(int64(benchConsume * (benchValueSize + 17)))
		start := time.Now()
		i := 0
		for b.Loop() {
			i++
			c, err := bb.Consumer(b.Context(), bus.SpiderFeed, fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i), parts)
			if err != nil {
				b.Fatal(err)
			}
			for n := 0; n < benchConsume; {
				ms, err := c.Fetch(b.Context(), 4096)
				if err != nil {
					b.Fatal(err)
				}
				n += len(ms)
			}
			_ = c.Close()
		}
		b.ReportMetric(float64(b.N*benchConsume)/time.Since(start).Seconds(), "msgs/s")
	})
	b.Run("raw-kafka-go", func(b *testing.B) {
		bb := benchBus(b)
		fillFeed(b, bb)
		cc := bb.cfg.Consumer
		b.SetBytes(int64(benchConsume * (benchValueSize + 17)))
		start := time.Now()
		for b.Loop() {
			// One partition Reader per partition, read concurrently, as the kafkabus consumer does.
			ctx, cancel := context.WithCancel(b.Context())
			var wg sync.WaitGroup
			var total atomic.Int64
			var once sync.Once
			done := make(chan struct{})
			readers := make([]*kafka.Reader, benchPartitions)
			for p := range benchPartitions {
				r := kafka.NewReader(kafka.ReaderConfig{
					Brokers: bb.cfg.Brokers, Topic: bb.cfg.SpiderFeed.Topic, Partition: p, Dialer: bb.dialer,
					QueueCapacity: 1024, MinBytes: cc.MinBytes, MaxBytes: cc.MaxBytes, MaxWait: cc.MaxWait,
					ReadLagInterval: -1, ReadBackoffMin: cc.RetryBackoff, ReadBackoffMax: cc.RetryBackoffMax, MaxAttempts: 3,
				})
				_ = r.SetOffset(kafka.FirstOffset)
				readers[p] = r
				wg.Go(func() {
					for {
						if _, err := r.FetchMessage(ctx); err != nil {
							return
						}
						if total.Add(1) >= benchConsume {
							once.Do(func() { close(done) })
						}
					}
				})
			}
			<-done
			cancel()
			for _, r := range readers {
				_ = r.Close()
			}
			wg.Wait()
		}
		b.ReportMetric(float64(b.N*benchConsume)/time.Since(start).Seconds(), "msgs/s")
	})
}
