package hbase

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"time"
)

// Config locates HBase's Thrift2 gateway and shapes how Frontier talks to it. The zero value is not usable; start
// from DefaultConfig.
type Config struct {
	// Addr is host:port of the Thrift2 gateway (org.apache.hadoop.hbase.thrift2.ThriftServer).
	Addr string `mapstructure:"addr"`
	// Transport must match the gateway: "framed" (deploy/up, Frontera's HBASE_USE_FRAMED_COMPACT) or "buffered"
	// (the gateway's own default, without -f).
	Transport string `mapstructure:"transport"`
	// Protocol must match the gateway: "binary" (default) or "compact" (started with -c).
	Protocol string `mapstructure:"protocol"`
	// Namespace holds the tables; "" is HBase's default namespace. EnsureSchema creates it if missing.
	Namespace string `mapstructure:"namespace"`
	// TablePrefix is put before every table name: <prefix>states, <prefix>queue, <prefix>metadata,
	// <prefix>domain_metadata.
	TablePrefix string `mapstructure:"table_prefix"`

	// PoolSize is the number of gateway connections kept (a Thrift client serves one call at a time).
	PoolSize int `mapstructure:"pool_size"`
	// DialTimeout bounds one TCP connect to the gateway.
	DialTimeout time.Duration `mapstructure:"dial_timeout"`
	// RequestTimeout bounds one call (one RPC), on top of the caller's ctx.
	RequestTimeout time.Duration `mapstructure:"request_timeout"`
	// Retries is how many times a call that failed with a retryable error (transport error, region moving,
	// server restarting) is tried again, with jittered exponential backoff from RetryBackoff up to
	// MaxRetryBackoff. -1 (the default) retries until the caller's context ends, so that an HBase or gateway
	// restart of any length is waited out rather than fatal.
	Retries int `mapstructure:"retries"`
	// StartupWait is how long New waits for a gateway that does not answer yet (so the roles may start before
	// HBase does). 0 gives up after the first failure.
	StartupWait     time.Duration `mapstructure:"startup_wait"`
	RetryBackoff    time.Duration `mapstructure:"retry_backoff"`
	MaxRetryBackoff time.Duration `mapstructure:"max_retry_backoff"`

	// GetBatch is the number of rows per getMultiple call; larger reads are split and run in parallel. 1024 gave
	// the most lookups/s on the benchmark machine (bench/results/hbase.md): 4096 cost HBase more CPU per Get.
	GetBatch int `mapstructure:"get_batch"`
	// PutBatch is the number of mutations per putMultiple/deleteMultiple call.
	PutBatch int `mapstructure:"put_batch"`
	// ScanBatch is the number of rows one queue scan call returns.
	ScanBatch int `mapstructure:"scan_batch"`
	// ScanMaxRows bounds the rows one Queue.Next reads (capped hosts and not-yet-due rows are read and skipped).
	ScanMaxRows int `mapstructure:"scan_max_rows"`
	// ScoreBuckets is the resolution of the queue's score part of the row key: scores in the same bucket are
	// ordered by host, which spreads a batch over hosts. 1000 buckets = steps of 0.001.
	ScoreBuckets int `mapstructure:"score_buckets"`
}

// DefaultConfig returns a configuration for a gateway on loopback.
func DefaultConfig() Config {
	return Config{
		Addr:            "127.0.0.1:9090",
		Transport:       "framed",
		Protocol:        "binary",
		TablePrefix:     "frontier_",
		PoolSize:        8,
		DialTimeout:     5 * time.Second,
		RequestTimeout:  60 * time.Second,
		Retries:         -1,
		StartupWait:     5 * time.Minute,
		RetryBackoff:    100 * time.Millisecond,
		MaxRetryBackoff: 5 * time.Second,
		GetBatch:        1024,
		PutBatch:        4096,
		ScanBatch:       2048,
		ScanMaxRows:     200_000,
		ScoreBuckets:    1000,
	}
}

var (
	identRE = regexp.MustCompile(`^[A-Za-z0-9_]*$`)
	// HBase table qualifiers allow [A-Za-z0-9_.-]; the prefix may not start with '.' or '-'.
	prefixRE = regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_.-]*)?$`)
)

// Validate reports every invalid value.
func (c Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("hbase: addr %q is not host:port", c.Addr))
	}
	if c.Transport != "buffered" && c.Transport != "framed" {
		errs = append(errs, fmt.Errorf("hbase: transport %q, want buffered or framed", c.Transport))
	}
	if c.Protocol != "binary" && c.Protocol != "compact" {
		errs = append(errs, fmt.Errorf("hbase: protocol %q, want binary or compact", c.Protocol))
	}
	if !identRE.MatchString(c.Namespace) {
		errs = append(errs, fmt.Errorf("hbase: namespace %q may hold only letters, digits and _", c.Namespace))
	}
	if !prefixRE.MatchString(c.TablePrefix) {
		errs = append(errs, fmt.Errorf("hbase: table_prefix %q may hold only letters, digits, _, . and - (not first)", c.TablePrefix))
	}
	pos := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("hbase: %s = %d, want > 0", name, v))
		}
	}
	pos("pool_size", c.PoolSize)
	pos("get_batch", c.GetBatch)
	pos("put_batch", c.PutBatch)
	pos("scan_batch", c.ScanBatch)
	pos("scan_max_rows", c.ScanMaxRows)
	if c.ScoreBuckets < 1 || c.ScoreBuckets > 65535 {
		errs = append(errs, fmt.Errorf("hbase: score_buckets = %d, want 1..65535", c.ScoreBuckets))
	}
	if c.Retries < -1 {
		errs = append(errs, fmt.Errorf("hbase: retries = %d, want >= 0 (or -1: until the caller's deadline)", c.Retries))
	}
	if c.StartupWait < 0 {
		errs = append(errs, fmt.Errorf("hbase: startup_wait = %v, want >= 0", c.StartupWait))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"dial_timeout", c.DialTimeout}, {"request_timeout", c.RequestTimeout}, {"retry_backoff", c.RetryBackoff}, {"max_retry_backoff", c.MaxRetryBackoff}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("hbase: %s = %v, want > 0", d.name, d.v))
		}
	}
	if c.MaxRetryBackoff > 0 && c.RetryBackoff > c.MaxRetryBackoff {
		errs = append(errs, fmt.Errorf("hbase: retry_backoff %v exceeds max_retry_backoff %v", c.RetryBackoff, c.MaxRetryBackoff))
	}
	return errors.Join(errs...)
}

// Table names, relative to the namespace.
const (
	statesTable   = "states"
	queueTable    = "queue"
	metadataTable = "metadata"
	domainsTable  = "domain_metadata"
)

// table returns the full name of one of Frontier's tables ("ns:prefixname" or "prefixname").
func (c Config) table(name string) string {
	if c.Namespace == "" {
		return c.TablePrefix + name
	}
	return c.Namespace + ":" + c.TablePrefix + name
}
