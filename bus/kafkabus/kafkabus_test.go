package kafkabus

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/goleak"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/bustest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var topicSeq atomic.Int64

// testLogger writes slog records to t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// newTestBus returns a Factory making buses on brokers, each with topics of its own (named after the test),
// created with EnsureTopics.
func newTestBus(brokers []string) bustest.Factory {
	return func(t *testing.T, partitions map[bus.Stream]int) bus.Bus {
		t.Helper()
		return openTestBus(t, brokers, partitions)
	}
}

func openTestBus(t testing.TB, brokers []string, partitions map[bus.Stream]int) *Bus {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Brokers = brokers
	cfg.Consumer.MaxWait = 100 * time.Millisecond
	id := topicSeq.Add(1)
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, t.Name())
	if len(name) > 150 {
		name = name[:150]
	}
	var specs []TopicSpec
	for _, s := range bus.Streams {
		n := partitions[s]
		if n == 0 {
			n = 1
		}
		sc := StreamConfig{Topic: fmt.Sprintf("t-%s-%s-%d-%d", name, s, time.Now().UnixNano(), id), Partitions: n}
		switch s {
		case bus.SpiderLog:
			cfg.SpiderLog = sc
		case bus.ScoringLog:
			cfg.ScoringLog = sc
		case bus.SpiderFeed:
			cfg.SpiderFeed = sc
		}
		specs = append(specs, TopicSpec{Name: sc.Topic, Partitions: n})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := EnsureTopics(ctx, brokers, specs); err != nil {
		t.Fatalf("EnsureTopics: %v", err)
	}
	b, err := New(cfg, testLogger(t), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func newKfake(t testing.TB) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func TestConformanceKfake(t *testing.T) {
	bustest.Run(t, newTestBus(newKfake(t)))
}

// TestTopicMustMatchConfig: producers and consumers refuse a topic that is missing or has another partition
// count than the config, naming both counts.
func TestTopicMustMatchConfig(t *testing.T) {
	brokers := newKfake(t)
	b := openTestBus(t, brokers, map[bus.Stream]int{bus.SpiderFeed: 3})
	cfg := b.Config()
	cfg.SpiderFeed.Partitions = 2
	cfg.SpiderLog.Topic = "no-such-topic"
	wrong, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	ctx := t.Context()
	if _, err := wrong.Producer(ctx, bus.SpiderFeed, nil); err == nil || !strings.Contains(err.Error(), "exists with 3 partitions, but the config wants 2") {
		t.Errorf("Producer on a 3-partition topic configured as 2 = %v", err)
	}
	if _, err := wrong.Consumer(ctx, bus.SpiderFeed, "g", []int{0}); err == nil || !strings.Contains(err.Error(), "3 partitions") {
		t.Errorf("Consumer on a 3-partition topic configured as 2 = %v", err)
	}
	if _, err := wrong.Producer(ctx, bus.SpiderLog, nil); err == nil || !strings.Contains(err.Error(), `topic "no-such-topic" does not exist`) {
		t.Errorf("Producer on a missing topic = %v", err)
	}
}

// TestLoggerAdapter: kafka-go's messages reach slog at the given level with their arguments formatted.
func TestLoggerAdapter(t *testing.T) {
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	kafkaLogger(log, slog.LevelDebug, "k", "v").Printf("hidden %d", 1)
	kafkaLogger(log, slog.LevelWarn, "k", "v").Printf("shown %d\n", 2)
	out := buf.String()
	if strings.Contains(out, "hidden") || !strings.Contains(out, `msg="kafka-go: shown 2"`) || !strings.Contains(out, "k=v") {
		t.Fatalf("log output %q", out)
	}
}

// TestEndOffsets: the end offset of each partition is the offset the next message will get (0 on an empty
// partition), and moves with every message produced on that partition only.
func TestEndOffsets(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	b := openTestBus(t, newKfake(t), map[bus.Stream]int{bus.SpiderLog: 2})
	ends := func() string {
		t.Helper()
		e, err := b.EndOffsets(ctx, bus.SpiderLog)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(e)
	}
	if got := ends(); got != "map[0:0 1:0]" {
		t.Fatalf("end offsets of an empty stream %s, want map[0:0 1:0]", got)
	}
	p, err := b.Producer(ctx, bus.SpiderLog, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range 3 {
		if err := p.Send(ctx, bus.Message{Key: []byte("k"), Value: fmt.Appendf(nil, "m%d", i), Partition: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if got := ends(); got != "map[0:0 1:3]" {
		t.Fatalf("end offsets after 3 messages on partition 1 %s, want map[0:0 1:3]", got)
	}
	if _, err := b.EndOffsets(ctx, bus.Control); err == nil {
		t.Error("EndOffsets of a stream the bus has no topic for: no error")
	}
}
