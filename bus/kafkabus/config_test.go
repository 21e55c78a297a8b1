package kafkabus

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier/bus"
)

func TestDefaultConfigValid(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	for _, s := range bus.Streams {
		if sc, ok := cfg.Stream(s); !ok || sc.Topic == "" || sc.Partitions != 1 {
			t.Errorf("Stream(%s) = %+v, %v", s, sc, ok)
		}
	}
	if _, ok := cfg.Stream("nope"); ok {
		t.Error(`Stream("nope") found a stream`)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want []string
	}{
		{"no brokers", func(c *Config) { c.Brokers = nil }, []string{"brokers: none given"}},
		{"bad broker", func(c *Config) { c.Brokers = []string{"localhost"} }, []string{`brokers: "localhost" is not host:port`}},
		{"bad topic", func(c *Config) { c.SpiderFeed.Topic = "a b" }, []string{"spider_feed.topic", "invalid character"}},
		{"same topic", func(c *Config) { c.ScoringLog.Topic = c.SpiderLog.Topic }, []string{`scoring_log.topic: "frontier-done" is also the topic of spider_log`}},
		{"partitions", func(c *Config) { c.SpiderLog.Partitions = 0 }, []string{"spider_log.partitions = 0"}},
		{"retention", func(c *Config) { c.ScoringLog.Retention = time.Second; c.Control.Retention = -time.Hour },
			[]string{"scoring_log.retention = 1s, want 0 (forever) or at least 1m", "control.retention = -1h0m0s"}},
		{"empty topic", func(c *Config) { c.Control.Topic = "" }, []string{"control.topic: topic name is empty"}},
		{"compression", func(c *Config) { c.Producer.Compression = "brotli" }, []string{`producer.compression: "brotli" is not a compression`}},
		{"acks", func(c *Config) { c.Producer.Acks = "none" }, []string{`producer.acks: "none"`}},
		{"batch", func(c *Config) { c.Producer.BatchSize = 0; c.Producer.BatchBytes = -1 }, []string{"producer.batch_size = 0", "producer.batch_bytes = -1"}},
		{"backoff", func(c *Config) { c.Producer.RetryBackoffMax = time.Millisecond }, []string{"producer.retry_backoff"}},
		{"fetch bytes", func(c *Config) { c.Consumer.MinBytes = 10; c.Consumer.MaxBytes = 5 }, []string{"consumer.min_bytes = 10 and max_bytes = 5"}},
		{"fetch below batch", func(c *Config) { c.Consumer.MaxBytes = 1 << 20; c.Producer.BatchBytes = 2 << 20 }, []string{"consumer.max_bytes = 1048576 is below producer.batch_bytes = 2097152"}},
		{"timeouts", func(c *Config) { c.DialTimeout = 0; c.RequestTimeout = -1; c.MetadataTTL = 0; c.Consumer.MaxWait = 0 },
			[]string{"dial_timeout = 0s", "request_timeout = -1ns", "metadata_ttl = 0s", "consumer.max_wait = 0s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.mod(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("Validate() = nil")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to mention %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "kafkabus: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if _, err := New(cfg, nil, nil); err == nil {
				t.Error("New accepted an invalid config")
			}
		})
	}
}

func TestRetriable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{kafka.NotLeaderForPartition, true},
		{kafka.LeaderNotAvailable, true},
		{kafka.NotCoordinatorForGroup, true},
		{kafka.RequestTimedOut, true},
		{kafka.BrokerNotAvailable, true},
		{kafka.ReplicaNotAvailable, true},
		{fmt.Errorf("offsets of t partition 0: %w", kafka.BrokerNotAvailable), true},
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("dial: %w", errors.New("connection refused")), true},
		{kafka.MessageSizeTooLarge, false},
		{kafka.TopicAuthorizationFailed, false},
		{kafka.InvalidTopic, false},
		{&kafka.MessageTooLargeError{}, false},
		{errors.Join(errors.New("partition 0"), kafka.NotCoordinatorForGroup), true},
	}
	for _, tc := range tests {
		if got := retriable(tc.err); got != tc.want {
			t.Errorf("retriable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestFailedMessages(t *testing.T) {
	kms := []kafka.Message{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}}
	failed, cause := failedMessages(kms, kafka.WriteErrors{nil, kafka.NotLeaderForPartition, nil})
	if len(failed) != 1 || string(failed[0].Value) != "b" || !errors.Is(cause, kafka.NotLeaderForPartition) {
		t.Fatalf("failedMessages = %v, %v; want [b], NotLeaderForPartition", failed, cause)
	}
	other := errors.New("boom")
	if failed, cause := failedMessages(kms, other); len(failed) != 3 || cause != other {
		t.Fatalf("failedMessages(plain error) = %d messages, %v", len(failed), cause)
	}
}
