package kafkabus

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/frontiercrawl/frontier/bus"
)

// Config configures the Kafka bus. The mapstructure keys are snake_case; configs/ composes it.
type Config struct {
	// Brokers are the bootstrap brokers, host:port.
	Brokers []string `mapstructure:"brokers"`
	// ClientID is sent to the brokers with every request (it shows in their logs and quotas).
	ClientID string `mapstructure:"client_id"`

	SpiderLog  StreamConfig `mapstructure:"spider_log"`
	ScoringLog StreamConfig `mapstructure:"scoring_log"`
	SpiderFeed StreamConfig `mapstructure:"spider_feed"`
	// Control is the run-time control stream (package control): one partition, kept forever.
	Control StreamConfig `mapstructure:"control"`

	Producer  ProducerConfig  `mapstructure:"producer"`
	Consumer  ConsumerConfig  `mapstructure:"consumer"`
	Ownership OwnershipConfig `mapstructure:"ownership"`

	// DialTimeout bounds opening a connection to a broker.
	DialTimeout time.Duration `mapstructure:"dial_timeout"`
	// RequestTimeout bounds one metadata, offset or commit request (the caller's context may end it sooner).
	RequestTimeout time.Duration `mapstructure:"request_timeout"`
	// MetadataTTL is how long topic metadata (partition leaders) is cached before it is read again. After a
	// broker restart, errors also refresh it.
	MetadataTTL time.Duration `mapstructure:"metadata_ttl"`
	// StartupWait is how long opening a producer or consumer waits for an unreachable cluster (with the
	// consumer's retry backoff) before it gives up, so that the start order of Kafka and the roles does not
	// matter. Once running, calls wait out an outage of any length. 0 gives up at once.
	StartupWait time.Duration `mapstructure:"startup_wait"`
}

// StreamConfig names a stream's topic, its partition count and its retention; it is also the streams.* section
// of the configuration (configs), so the keys are declared and validated here once. The partition count must
// equal the topic's on the broker: producers and consumers refuse to open otherwise (as Frontera asserts),
// because another count would move hosts to other partitions.
type StreamConfig struct {
	Topic      string `mapstructure:"topic"`
	Partitions int    `mapstructure:"partitions"`
	// Retention is how long the topic keeps a message (its retention.ms, set by frontierctl topics through
	// RetentionConfigs; the broker-wide default never decides); 0 keeps messages forever. A consumer that falls
	// further behind stops with an error naming the messages lost (docs/reliability.md, "Retention"). The bus
	// itself does not read it.
	Retention time.Duration `mapstructure:"retention"`
}

// Validate reports every problem with the stream's keys, each naming its key: the topic name (Kafka's rules),
// a partition count of at least 1, and a retention of 0 (forever) or at least a minute.
func (c StreamConfig) Validate() error {
	var errs []error
	if err := validTopicName(c.Topic); err != nil {
		errs = append(errs, fmt.Errorf("topic: %s", strings.TrimPrefix(err.Error(), "kafkabus: ")))
	}
	if c.Partitions <= 0 {
		errs = append(errs, fmt.Errorf("partitions = %d, want > 0", c.Partitions))
	}
	if c.Retention < 0 || c.Retention > 0 && c.Retention < time.Minute {
		errs = append(errs, fmt.Errorf("retention = %v, want 0 (forever) or at least 1m", c.Retention))
	}
	return errors.Join(errs...)
}

// ProducerConfig tunes producers. Send returns only when its messages are acknowledged, so Linger is the most a
// Send can wait for other messages to join its batch: keep it short.
type ProducerConfig struct {
	// BatchSize is the most messages in one produce request to one partition.
	BatchSize int `mapstructure:"batch_size"`
	// BatchBytes is the most bytes (kafka-go's estimate: keys, values and about 22 bytes a message) in one
	// record batch to one partition, which the broker refuses whole when it exceeds the topic's
	// max.message.bytes (by default the broker's message.max.bytes, 1,048,588). The default, 1,000,000, fits
	// every broker's default; above BrokerDefaultMaxMessageBytes, the topics (or brokers) must allow it, or
	// Send fails (Bus.New logs a warning). A message bigger than BatchBytes is an error of Send.
	BatchBytes int64 `mapstructure:"batch_bytes"`
	// Linger is how long a partition's batch waits to fill before it is sent.
	Linger time.Duration `mapstructure:"linger"`
	// Compression: none, gzip, snappy, lz4 or zstd.
	Compression string `mapstructure:"compression"`
	// Acks: "all" (every in-sync replica; the default, since nothing may be lost) or "leader".
	Acks string `mapstructure:"acks"`
	// WriteTimeout bounds one produce request.
	WriteTimeout time.Duration `mapstructure:"write_timeout"`
	// MaxAttempts is how often kafka-go tries one batch before Send sees the error; Send then retries the failed
	// messages itself, with RetryBackoff doubling up to RetryBackoffMax, until its context ends. A write made
	// for owned partitions (under a fence: bus.WithFence) is tried once per Send attempt, each after a check.
	MaxAttempts     int           `mapstructure:"max_attempts"`
	RetryBackoff    time.Duration `mapstructure:"retry_backoff"`
	RetryBackoffMax time.Duration `mapstructure:"retry_backoff_max"`
}

// BrokerDefaultMaxMessageBytes is Kafka's default message.max.bytes (a topic's max.message.bytes): the
// largest record batch a broker accepts unless configured otherwise.
const BrokerDefaultMaxMessageBytes = 1_048_588

// ConsumerConfig tunes consumers.
type ConsumerConfig struct {
	// MinBytes and MaxBytes bound one fetch from one partition; MaxWait is how long the broker may hold a fetch
	// while fewer than MinBytes are available. MaxBytes must be at least producer.batch_bytes, so that one fetch
	// holds the largest batch a producer writes.
	MinBytes int           `mapstructure:"min_bytes"`
	MaxBytes int           `mapstructure:"max_bytes"`
	MaxWait  time.Duration `mapstructure:"max_wait"`
	// Buffer is about how many fetched messages wait, per consumer, for Fetch (in chunks of up to 1024); with
	// one MaxBytes fetch in flight per partition it bounds a consumer's memory.
	Buffer int `mapstructure:"buffer"`
	// RetryBackoff and RetryBackoffMax space reconnection attempts after a broker error.
	RetryBackoff    time.Duration `mapstructure:"retry_backoff"`
	RetryBackoffMax time.Duration `mapstructure:"retry_backoff_max"`
}

// DefaultConfig returns Frontera's topics, one partition per stream, a broker on 127.0.0.1:9092, and
// settings measured in bench/results/bus.md (except producer.batch_bytes, lowered since from 4 MiB to fit
// Kafka's default message.max.bytes).
func DefaultConfig() Config {
	return Config{
		Brokers:    []string{"127.0.0.1:9092"},
		ClientID:   "frontier",
		SpiderLog:  StreamConfig{Topic: "frontier-done", Partitions: 1},
		ScoringLog: StreamConfig{Topic: "frontier-score", Partitions: 1},
		SpiderFeed: StreamConfig{Topic: "frontier-todo", Partitions: 1},
		Control:    StreamConfig{Topic: "frontier-control", Partitions: 1},
		Producer: ProducerConfig{
			BatchSize:       1024,
			BatchBytes:      1_000_000, // under Kafka's default message.max.bytes (Frontera's 4 MiB max_request_size is not)
			Linger:          2 * time.Millisecond,
			Compression:     "none",
			Acks:            "all",
			WriteTimeout:    10 * time.Second,
			MaxAttempts:     3,
			RetryBackoff:    100 * time.Millisecond,
			RetryBackoffMax: 2 * time.Second,
		},
		Consumer: ConsumerConfig{
			MinBytes:        1,
			MaxBytes:        10 << 20, // Frontera's max_partition_fetch_bytes
			MaxWait:         250 * time.Millisecond,
			Buffer:          8192,
			RetryBackoff:    100 * time.Millisecond,
			RetryBackoffMax: 2 * time.Second,
		},
		Ownership: OwnershipConfig{
			SessionTimeout:    10 * time.Second,
			HeartbeatInterval: time.Second,
			RebalanceTimeout:  20 * time.Second,
		},
		DialTimeout:    5 * time.Second,
		RequestTimeout: 10 * time.Second,
		MetadataTTL:    6 * time.Second,
		StartupWait:    5 * time.Minute,
	}
}

// Stream returns the configuration of stream s, and false for an unknown stream.
func (c Config) Stream(s bus.Stream) (StreamConfig, bool) {
	switch s {
	case bus.SpiderLog:
		return c.SpiderLog, true
	case bus.ScoringLog:
		return c.ScoringLog, true
	case bus.SpiderFeed:
		return c.SpiderFeed, true
	case bus.Control:
		return c.Control, true
	}
	return StreamConfig{}, false
}

// Validate reports every problem with the configuration, each naming its key.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("kafkabus: "+format, args...)) }
	if len(c.Brokers) == 0 {
		add("brokers: none given")
	}
	for _, b := range c.Brokers {
		if _, _, err := net.SplitHostPort(b); err != nil {
			add("brokers: %q is not host:port", b)
		}
	}
	topics := map[string]string{}
	for _, s := range []struct {
		key string
		sc  StreamConfig
	}{{"spider_log", c.SpiderLog}, {"scoring_log", c.ScoringLog}, {"spider_feed", c.SpiderFeed}, {"control", c.Control}} {
		if err := s.sc.Validate(); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				add("%s.%s", s.key, line)
			}
		}
		if other, dup := topics[s.sc.Topic]; dup {
			add("%s.topic: %q is also the topic of %s", s.key, s.sc.Topic, other)
		}
		topics[s.sc.Topic] = s.key
	}
	p := c.Producer
	if p.BatchSize <= 0 {
		add("producer.batch_size = %d, want > 0", p.BatchSize)
	}
	if p.BatchBytes <= 0 {
		add("producer.batch_bytes = %d, want > 0", p.BatchBytes)
	}
	if p.Linger < 0 {
		add("producer.linger = %s, want >= 0", p.Linger)
	}
	if _, err := compression(p.Compression); err != nil {
		add("producer.compression: %v", err)
	}
	if _, err := acks(p.Acks); err != nil {
		add("producer.acks: %v", err)
	}
	if p.WriteTimeout <= 0 {
		add("producer.write_timeout = %s, want > 0", p.WriteTimeout)
	}
	if p.MaxAttempts <= 0 {
		add("producer.max_attempts = %d, want > 0", p.MaxAttempts)
	}
	if p.RetryBackoff <= 0 || p.RetryBackoffMax < p.RetryBackoff {
		add("producer.retry_backoff = %s and retry_backoff_max = %s, want 0 < retry_backoff <= retry_backoff_max", p.RetryBackoff, p.RetryBackoffMax)
	}
	k := c.Consumer
	if k.MinBytes <= 0 || k.MaxBytes < k.MinBytes {
		add("consumer.min_bytes = %d and max_bytes = %d, want 0 < min_bytes <= max_bytes", k.MinBytes, k.MaxBytes)
	}
	if p.BatchBytes > 0 && int64(k.MaxBytes) < p.BatchBytes {
		add("consumer.max_bytes = %d is below producer.batch_bytes = %d, want max_bytes >= batch_bytes", k.MaxBytes, p.BatchBytes)
	}
	if k.MaxWait <= 0 {
		add("consumer.max_wait = %s, want > 0", k.MaxWait)
	}
	if k.Buffer <= 0 {
		add("consumer.buffer = %d, want > 0", k.Buffer)
	}
	if k.RetryBackoff <= 0 || k.RetryBackoffMax < k.RetryBackoff {
		add("consumer.retry_backoff = %s and retry_backoff_max = %s, want 0 < retry_backoff <= retry_backoff_max", k.RetryBackoff, k.RetryBackoffMax)
	}
	if c.DialTimeout <= 0 {
		add("dial_timeout = %s, want > 0", c.DialTimeout)
	}
	if c.RequestTimeout <= 0 {
		add("request_timeout = %s, want > 0", c.RequestTimeout)
	}
	if c.MetadataTTL <= 0 {
		add("metadata_ttl = %s, want > 0", c.MetadataTTL)
	}
	if o := c.Ownership; o.HeartbeatInterval <= 0 || o.SessionTimeout <= o.HeartbeatInterval || o.RebalanceTimeout <= 0 {
		add("ownership: heartbeat_interval = %s, session_timeout = %s, rebalance_timeout = %s, want 0 < heartbeat_interval < session_timeout and rebalance_timeout > 0",
			o.HeartbeatInterval, o.SessionTimeout, o.RebalanceTimeout)
	}
	if c.StartupWait < 0 {
		add("startup_wait = %s, want >= 0", c.StartupWait)
	}
	return errors.Join(errs...)
}
