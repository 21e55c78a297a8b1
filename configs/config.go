package configs

import (
	"errors"
	"fmt"
	"github.com/frontiercrawl/frontier/identity"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/standalone"
	"github.com/frontiercrawl/frontier/strategyworker"
	"github.com/frontiercrawl/frontier/warc"
)

// Roles are the process roles a configuration can be loaded for.
var Roles = []string{"spider", "strategyworker", "dbworker", "standalone"}

// Config is the whole configuration of one Frontier process.
type Config struct {
	Log      LogConfig      `mapstructure:"log"`
	Metrics  MetricsConfig  `mapstructure:"metrics"`
	Identity IdentityConfig `mapstructure:"identity"`
	// Codec is the wire codec of every stream: "msgpack" (Frontera's default) or "json".
	Codec   string        `mapstructure:"codec"`
	Streams StreamsConfig `mapstructure:"streams"`
	Kafka   KafkaConfig   `mapstructure:"kafka"`
	HBase   hbase.Config  `mapstructure:"hbase"`
	// Spider configures the spiders (politeness, timeouts, sizes); WARC, when warc.dir is set, archives every
	// fetched response.
	Spider spider.Config `mapstructure:"spider"`
	WARC   warc.Config   `mapstructure:"warc"`
	// StrategyWorker chooses the strategy and sizes the state cache.
	StrategyWorker strategyworker.Config `mapstructure:"strategy_worker"`
	// Scope is what links the crawl follows and its trap defences (package scope). Every role loads and
	// validates it; the strategy workers apply it.
	Scope scope.Config `mapstructure:"scope"`
	// Seeds says where a crawl finds URLs besides its seed files.
	Seeds SeedsConfig `mapstructure:"seeds"`
	// DBWorker sizes batches and flow control, and picks the DB worker's roles.
	DBWorker dbworker.Config `mapstructure:"db_worker"`
	// Standalone configures the single-process mode: standalone.Config declares and validates the section's keys;
	// its other fields are filled from the sections above (FillGlobals).
	Standalone standalone.Config `mapstructure:"standalone"`
	// StatsInterval is how often every process logs its stats line.
	StatsInterval time.Duration `mapstructure:"stats_interval"`
	// ShutdownTimeout bounds draining, flushing and committing after SIGTERM.
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
}

// SeedsConfig is the seeds section.
type SeedsConfig struct {
	// Sitemaps crawls the sitemaps the Sitemap lines of every robots.txt name, and the pages they list
	// (spider.Config.Sitemaps: either key turns it on). Default false.
	Sitemaps bool `mapstructure:"sitemaps"`
}

// LogConfig configures slog.
type LogConfig struct {
	Level  string `mapstructure:"level"`  // debug, info, warn, error
	Format string `mapstructure:"format"` // text or json
}

// MetricsConfig configures the HTTP endpoint serving /metrics and /healthz.
type MetricsConfig struct {
	// Addr is host:port to listen on; port 0 picks a free port; "" disables the endpoint.
	Addr string `mapstructure:"addr"`
}

// IdentityConfig chooses how URLs are identified (package identity).
type IdentityConfig struct {
	// Canonicalization is the canonical-URL rule set: "w3lib-2.5" (what Scrapy installs today) or "w3lib-1.22"
	// (Frontera's era; its fingerprints match data written by Frontera).
	Canonicalization string `mapstructure:"canonicalization"`
	// Fingerprint names the URL fingerprint function: sha1, md5, hostname_local, scrapy, scrapy_legacy.
	Fingerprint string `mapstructure:"fingerprint"`
}

// StreamsConfig names the streams (bus/topology.go declares how each is keyed and read); each is a
// kafkabus.StreamConfig, which declares and validates its keys (topic, partitions, retention).
type StreamsConfig struct {
	SpiderLog  kafkabus.StreamConfig `mapstructure:"spider_log"`
	ScoringLog kafkabus.StreamConfig `mapstructure:"scoring_log"`
	SpiderFeed kafkabus.StreamConfig `mapstructure:"spider_feed"`
	// Control carries frontierctl's run-time commands (block, unblock, pause, resume): one partition, and a
	// retention of 0 (Validate checks both).
	Control kafkabus.StreamConfig `mapstructure:"control"`
}

// KafkaConfig locates the Kafka cluster.
type KafkaConfig struct {
	Brokers []string `mapstructure:"brokers"`
	// StartupWait is how long a starting process waits for an unreachable cluster before it gives up (so the
	// start order of Kafka and the roles does not matter); once running, outages of any length are waited out.
	StartupWait time.Duration `mapstructure:"startup_wait"`
}

// DefaultRetention is how long the spider log, scoring log and spider feed keep messages unless configured:
// a week, so a worker down over a long weekend resumes where it stopped.
const DefaultRetention = 7 * 24 * time.Hour

// DefaultConfig returns the configuration used for every key no file, variable or flag sets, with the global
// keys filled into the role sections (see FillGlobals).
func DefaultConfig() Config {
	c := defaults()
	c.FillGlobals()
	return c
}

// defaults are DefaultConfig before FillGlobals: the role sections' own shutdown_timeout keys are empty, so
// that the global key fills them unless a file, variable or flag sets them.
func defaults() Config {
	c := Config{
		Log:      LogConfig{Level: "info", Format: "text"},
		Metrics:  MetricsConfig{Addr: "127.0.0.1:0"},
		Identity: IdentityConfig{Canonicalization: "w3lib-2.5", Fingerprint: "sha1"},
		Codec:    "msgpack",
		Streams: StreamsConfig{
			SpiderLog:  kafkabus.StreamConfig{Topic: "frontier-done", Partitions: 2, Retention: DefaultRetention},
			ScoringLog: kafkabus.StreamConfig{Topic: "frontier-score", Partitions: 1, Retention: DefaultRetention},
			SpiderFeed: kafkabus.StreamConfig{Topic: "frontier-todo", Partitions: 2, Retention: DefaultRetention},
			Control:    kafkabus.StreamConfig{Topic: "frontier-control", Partitions: 1},
		},
		Kafka:           KafkaConfig{Brokers: []string{"127.0.0.1:9092"}, StartupWait: 5 * time.Minute},
		HBase:           hbase.DefaultConfig(),
		Spider:          spider.DefaultConfig(),
		WARC:            warc.DefaultConfig(),
		StrategyWorker:  strategyworker.DefaultConfig(),
		Scope:           scope.DefaultConfig(),
		DBWorker:        dbworker.DefaultConfig(),
		Standalone:      standaloneDefaults(),
		StatsInterval:   30 * time.Second,
		ShutdownTimeout: 30 * time.Second,
	}
	c.StrategyWorker.ShutdownTimeout, c.DBWorker.ShutdownTimeout = 0, 0
	return c
}

// FillGlobals fills the fields of the role sections that the global keys decide, in this one place (as
// Prometheus's global section fills each scrape config's empty interval and timeout):
//
//   - shutdown_timeout fills strategy_worker.shutdown_timeout and db_worker.shutdown_timeout when they are
//     empty (0), and is the spider's (which has no key of its own): every role, in a cluster or standalone,
//     drains within it after SIGTERM unless its own key says otherwise;
//   - stats_interval is every role's stats line interval;
//   - seeds.sitemaps turns on the spiders' robots.txt sitemaps (spider.sitemaps does too);
//   - the scope section is the strategy workers' scope;
//   - the standalone section (standalone.Config) takes codec, identity, the role sections and stats_interval.
//
// Load calls it before Validate; a caller that changes a global key of a loaded Config calls it again.
func (c *Config) FillGlobals() {
	if c.StrategyWorker.ShutdownTimeout == 0 {
		c.StrategyWorker.ShutdownTimeout = c.ShutdownTimeout
	}
	if c.DBWorker.ShutdownTimeout == 0 {
		c.DBWorker.ShutdownTimeout = c.ShutdownTimeout
	}
	c.Spider.ShutdownTimeout = c.ShutdownTimeout
	c.Spider.Sitemaps = c.Spider.Sitemaps || c.Seeds.Sitemaps
	c.Spider.StatsInterval, c.StrategyWorker.StatsInterval, c.DBWorker.StatsInterval = c.StatsInterval, c.StatsInterval, c.StatsInterval
	c.StrategyWorker.Scope = c.Scope
	sa := &c.Standalone
	sa.Codec, sa.Canonicalization, sa.Fingerprint = c.Codec, c.Identity.Canonicalization, c.Identity.Fingerprint
	sa.Spider, sa.StrategyWorker, sa.DBWorker, sa.StatsInterval = c.Spider, c.StrategyWorker, c.DBWorker, c.StatsInterval
}

// Validate reports every invalid value, each prefixed with its key.
func (c Config) Validate() error {
	var errs []error
	add := func(key string, err error) { errs = append(errs, prefixed(key, err)...) }
	add("log", c.Log.Validate())
	if c.Metrics.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Metrics.Addr); err != nil {
			add("metrics.addr", fmt.Errorf("%q is not host:port", c.Metrics.Addr))
		}
	}
	add("identity", c.Identity.Validate())
	switch c.Codec {
	case "msgpack", "json":
	default:
		add("codec", fmt.Errorf("%q is not a codec; want msgpack or json", c.Codec))
	}
	add("streams.spider_log", c.Streams.SpiderLog.Validate())
	add("streams.scoring_log", c.Streams.ScoringLog.Validate())
	add("streams.spider_feed", c.Streams.SpiderFeed.Validate())
	add("streams.control", c.Streams.Control.Validate())
	if c.Streams.Control.Partitions != 1 {
		add("streams.control.partitions", fmt.Errorf("= %d, want 1 (commands are ordered)", c.Streams.Control.Partitions))
	}
	if c.Streams.Control.Retention != 0 {
		add("streams.control.retention", fmt.Errorf("= %v, want 0 (kept forever: every process replays the commands from the start)", c.Streams.Control.Retention))
	}
	if len(c.Kafka.Brokers) == 0 {
		add("kafka.brokers", errors.New("no brokers"))
	}
	for _, b := range c.Kafka.Brokers {
		if _, _, err := net.SplitHostPort(b); err != nil {
			add("kafka.brokers", fmt.Errorf("%q is not host:port", b))
		}
	}
	if c.Kafka.StartupWait < 0 {
		add("kafka.startup_wait", fmt.Errorf("%v, want >= 0", c.Kafka.StartupWait))
	}
	add("hbase", c.HBase.Validate())
	add("spider", c.Spider.Validate())
	if c.WARC.Dir != "" {
		add("warc", c.WARC.Validate())
	}
	add("strategy_worker", c.StrategyWorker.Validate())
	add("scope", c.Scope.Validate())
	add("db_worker", c.DBWorker.Validate())
	add("standalone", c.Standalone.Validate())
	if c.StatsInterval <= 0 {
		add("stats_interval", fmt.Errorf("%v, want > 0", c.StatsInterval))
	}
	if c.ShutdownTimeout <= 0 {
		add("shutdown_timeout", fmt.Errorf("%v, want > 0", c.ShutdownTimeout))
	}
	return errors.Join(errs...)
}

// Validate checks the level and format names.
func (c LogConfig) Validate() error {
	var errs []error
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.Level)); err != nil {
		errs = append(errs, fmt.Errorf("level %q is not debug, info, warn or error", c.Level))
	}
	if c.Format != "text" && c.Format != "json" {
		errs = append(errs, fmt.Errorf("format %q is not text or json", c.Format))
	}
	return errors.Join(errs...)
}

// Validate checks the names with the identity layer's own parsers.
func (c IdentityConfig) Validate() error {
	_, err := c.New()
	return err
}

// New returns the identity layer this section configures.
func (c IdentityConfig) New() (identity.Identifier, error) {
	mode, err := identity.ParseCanonMode(c.Canonicalization)
	if err != nil {
		return identity.Identifier{}, &keyError{key: "canonicalization", pkg: "identity", err: err}
	}
	id, err := identity.New(c.Fingerprint, identity.CanonOptions{Mode: mode})
	if err != nil {
		return identity.Identifier{}, &keyError{key: "fingerprint", pkg: "identity", err: err}
	}
	return id, nil
}

// keyError names the key of an error from package pkg, dropping pkg's own prefix so that the message reads as
// one sentence ("identity: fingerprint: unknown fingerprint …", not "…: fingerprint: identity: unknown …").
type keyError struct {
	key, pkg string
	err      error
}

func (e *keyError) Error() string {
	return e.key + ": " + strings.TrimPrefix(e.err.Error(), e.pkg+": ")
}
func (e *keyError) Unwrap() error { return e.err }

// prefixed puts key in front of err, and of each error err joins, so every line of a report names its key.
func prefixed(key string, err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, prefixed(key, e)...)
		}
		return out
	}
	if strings.HasPrefix(err.Error(), key+": ") { // packages named like their section prefix their own errors
		return []error{err}
	}
	return []error{fmt.Errorf("%s: %w", key, err)}
}

// DefaultStandaloneMemoryLimit is standalone.memory_limit unless configured: 256 MiB, below the 300 MB a
// standalone crawl should peak at. It is split (package standalone, "Memory"): Pebble's block cache and
// memtables a quarter (64 MiB), the response bodies of all the spiders a quarter (64 MiB), the rest of the Go
// heap half; the Go runtime's soft limit is the limit minus Pebble's cache (192 MiB). The limit is soft: a
// live heap above it is not an error, the collector then just runs more often.
const DefaultStandaloneMemoryLimit = 256 << 20

// standaloneDefaults are package standalone's defaults for cmd/standalone: two spiders and two strategy workers, the data
// in data/standalone, stopping when done, pebblestore's default sized for a crawl that fits one machine (a
// Bloom filter designed for 10 million URLs at 1% rather than pebblestore's 100 million; it grows with the crawl
// from about 1.2 MB), and a memory limit of DefaultStandaloneMemoryLimit, from which Pebble's block cache is
// sized (cache_bytes 0).
func standaloneDefaults() standalone.Config {
	e := standalone.DefaultConfig()
	e.DataDir, e.Spiders, e.StrategyWorkers, e.StopWhenDone = "data/standalone", 2, 2, true
	e.Pebble.Bloom.Expected = 10_000_000
	e.MemoryLimit = DefaultStandaloneMemoryLimit
	e.Pebble.CacheBytes = 0 // a quarter of the memory limit (standalone.Config.Memory)
	return e
}

// KafkaBus returns the kafkabus configuration of this configuration's brokers and streams, with the client id
// clientID and kafkabus's defaults for everything else.
func (c *Config) KafkaBus(clientID string) kafkabus.Config {
	k := kafkabus.DefaultConfig()
	k.Brokers = c.Kafka.Brokers
	k.ClientID = clientID
	k.StartupWait = c.Kafka.StartupWait
	k.SpiderLog, k.ScoringLog, k.SpiderFeed, k.Control = c.Streams.SpiderLog, c.Streams.ScoringLog, c.Streams.SpiderFeed, c.Streams.Control
	return k
}
