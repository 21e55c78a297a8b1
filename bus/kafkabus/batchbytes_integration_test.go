//go:build integration

package kafkabus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
)

func largeMessages(n int) ([]bus.Message, int) {
	msgs := make([]bus.Message, n)
	total := 0
	for i := range msgs {
		v := append([]byte(fmt.Sprintf("%06d:", i)), bytes.Repeat([]byte{'x'}, 1200)...)
		msgs[i] = bus.Message{Key: []byte(fmt.Sprintf("k%06d", i)), Value: v}
		total += len(msgs[i].Key) + len(v)
	}
	return msgs, total
}

// TestLargeSendDefaults: one Send of 2,048 messages of 1.2 KiB each (about 2.5 MB, to one partition) with the
// default producer settings, to a topic with the broker's default max.message.bytes (1,048,588), is written
// whole and read back whole: the producer's batches fit the broker's default.
func TestLargeSendDefaults(t *testing.T) {
	brokers := kafkaBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	b := realBus(t, brokers, nil)
	p, err := b.Producer(ctx, bus.SpiderLog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 2048
	msgs, total := largeMessages(n)
	if err := p.Send(ctx, msgs...); err != nil {
		t.Fatalf("Send of %d messages (%d bytes): %v", n, total, err)
	}
	c, err := b.Consumer(ctx, bus.SpiderLog, "large-send", []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := 0
	for got < n {
		ms, err := c.Fetch(ctx, n)
		if err != nil {
			t.Fatalf("Fetch after %d of %d messages: %v", got, n, err)
		}
		for _, m := range ms {
			if want := msgs[got].Value; !bytes.Equal(m.Value, want) {
				t.Fatalf("message %d: value %.10q…, want %.10q…", got, m.Value, want)
			}
			got++
		}
	}
}

// TestLargeSendAboveTopicLimit: with producer.batch_bytes above the topic's max.message.bytes (the old default,
// 4 MiB), the same Send fails at once, not retried, with an error naming the topic, the size and the settings.
func TestLargeSendAboveTopicLimit(t *testing.T) {
	brokers := kafkaBrokers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	b := realBus(t, brokers, nil)
	b.cfg.Producer.BatchBytes = 4 << 20
	p, err := b.Producer(ctx, bus.SpiderLog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	msgs, total := largeMessages(2048)
	err = p.Send(ctx, msgs...)
	if err == nil {
		t.Fatal("Send succeeded, want Message Size Too Large")
	}
	t.Log(err)
	if !errors.Is(err, kafka.MessageSizeTooLarge) {
		t.Errorf("error %v is not kafka.MessageSizeTooLarge", err)
	}
	for _, want := range []string{b.cfg.SpiderLog.Topic, fmt.Sprint(total), "batch_bytes = 4194304", "max.message.bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if ctx.Err() != nil {
		t.Errorf("Send returned only when its context ended: %v", err)
	}
}
