package hbase

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/state"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	tests := []struct {
		name string
		mod  func(*Config)
		want []string
	}{
		{"addr", func(c *Config) { c.Addr = "localhost" }, []string{`addr "localhost" is not host:port`}},
		{"transport", func(c *Config) { c.Transport = "http" }, []string{`transport "http"`}},
		{"protocol", func(c *Config) { c.Protocol = "json" }, []string{`protocol "json"`}},
		{"namespace", func(c *Config) { c.Namespace = "a:b" }, []string{`namespace "a:b"`}},
		{"prefix", func(c *Config) { c.TablePrefix = "-x" }, []string{`table_prefix "-x"`}},
		{"sizes", func(c *Config) { c.PoolSize, c.GetBatch, c.ScanBatch = 0, -1, 0 },
			[]string{"pool_size = 0", "get_batch = -1", "scan_batch = 0"}},
		{"buckets", func(c *Config) { c.ScoreBuckets = 70000 }, []string{"score_buckets = 70000"}},
		{"durations", func(c *Config) { c.DialTimeout, c.RetryBackoff = 0, time.Minute },
			[]string{"dial_timeout = 0s", "retry_backoff 1m0s exceeds max_retry_backoff"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.mod(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) || !strings.HasPrefix(err.Error(), "hbase: ") {
					t.Errorf("error %q does not hold %q", err, w)
				}
			}
		})
	}
}

func TestTableNames(t *testing.T) {
	cfg := DefaultConfig()
	if got := cfg.table(statesTable); got != "frontier_states" {
		t.Errorf("default namespace: %q", got)
	}
	cfg.Namespace, cfg.TablePrefix = "crawl", ""
	if got := cfg.table(queueTable); got != "crawl:queue" {
		t.Errorf("namespace crawl: %q", got)
	}
}

func quickConfig() Config {
	cfg := fakeConfig()
	cfg.Retries, cfg.RetryBackoff, cfg.MaxRetryBackoff = 3, time.Millisecond, 2*time.Millisecond
	return cfg
}

func TestRetryTransportErrors(t *testing.T) {
	f := newFakeHBase()
	c := newFakeClient(f, quickConfig())
	failures := 2
	f.fail = func(op string) error {
		if op == "putMultiple" && failures > 0 {
			failures--
			return thrift.NewTTransportException(thrift.END_OF_FILE, "connection reset by gateway restart")
		}
		return nil
	}
	st := c.States()
	fps := []frontier.Fingerprint{{1}, {2}}
	if err := st.Put(t.Context(), fps, []state.Entry{{State: frontier.Crawled}, {State: frontier.Queued}}); err != nil {
		t.Fatalf("Put after 2 transport errors: %v", err)
	}
	if f.calls["putMultiple"] != 3 {
		t.Errorf("putMultiple called %d times, want 3", f.calls["putMultiple"])
	}
	// A region in transit is retried too; the connection stays.
	failures = 1
	f.fail = func(op string) error {
		if op == "getMultiple" && failures > 0 {
			failures--
			return &thrift2.TIOError{Message: thrift2Str("org.apache.hadoop.hbase.NotServingRegionException: region is moving")}
		}
		return nil
	}
	out, found := make([]state.Entry, 2), make([]bool, 2)
	if err := st.Get(t.Context(), fps, out, found); err != nil || !found[0] || out[1].State != frontier.Queued {
		t.Fatalf("Get after NotServingRegion: %v %v %v", out, found, err)
	}
}

func TestNoRetry(t *testing.T) {
	f := newFakeHBase()
	c := newFakeClient(f, quickConfig())
	f.fail = func(op string) error {
		if op == "putMultiple" {
			return &thrift2.TIllegalArgument{Message: thrift2Str("bad put")}
		}
		return nil
	}
	err := c.States().Put(t.Context(), []frontier.Fingerprint{{1}}, []state.Entry{{State: frontier.Crawled}})
	var he *Error
	if !errors.As(err, &he) || he.Retryable || IsRetryable(err) || f.calls["putMultiple"] != 1 {
		t.Fatalf("illegal argument: %v (calls %d), want one call and a non-retryable *Error", err, f.calls["putMultiple"])
	}
	if !strings.Contains(err.Error(), "putMultiple frontier_states") || !strings.Contains(err.Error(), "bad put") {
		t.Errorf("error %q does not name the call and the cause", err)
	}
}

// A counter write whose answer is lost after HBase applied it (the connection breaks on the way back) is
// retried, like every other call, and counts once: the retried check-and-put finds the version moved, and the
// next read finds the write's marks. This replaced the increment, which was not retried (and made the workers
// exit on an HBase restart).
func TestCounterRetryCountsOnce(t *testing.T) {
	f := newFakeHBase()
	c := newFakeClient(f, quickConfig())
	d := c.Domains()
	lose := 2 // the answers of the first two writes are lost
	f.after = func(op string) error {
		if op == "checkAndMutate" && lose > 0 {
			lose--
			return thrift.NewTTransportException(thrift.END_OF_FILE, "EOF")
		}
		return nil
	}
	got, err := d.Add(t.Context(), "n", []string{"a.com", "b.com", "a.com"}, []int64{1, 5, 2})
	if err != nil || !slices.Equal(got, []int64{1, 5, 3}) {
		t.Fatalf("Add through lost answers = %v, %v, want [1 5 3]", got, err)
	}
	got, err = d.AddOnce(t.Context(), "n", []metadata.Tally{{Domain: "a.com", Delta: 10, Source: "p0", Seq: 7}})
	if err != nil || !slices.Equal(got, []int64{13}) {
		t.Fatalf("AddOnce = %v, %v", got, err)
	}
	lose = 1
	got, err = d.AddOnce(t.Context(), "n", []metadata.Tally{{Domain: "a.com", Delta: 10, Source: "p0", Seq: 7}, {Domain: "a.com", Delta: 1, Source: "p0", Seq: 8}})
	if err != nil || !slices.Equal(got, []int64{14, 14}) {
		t.Fatalf("AddOnce replayed with one new tally, answer lost = %v, %v, want [14 14]", got, err)
	}
	if g, err := d.Get(t.Context(), "n", []string{"a.com", "b.com"}); err != nil || !slices.Equal(g, []int64{14, 5}) {
		t.Fatalf("Get = %v, %v, want [14 5]", g, err)
	}
	if f.calls["increment"] != 0 {
		t.Errorf("%d increments: counters must not use them", f.calls["increment"])
	}
}

func TestGiveUp(t *testing.T) {
	f := newFakeHBase()
	c := newFakeClient(f, quickConfig())
	f.fail = func(op string) error { return thrift.NewTTransportException(thrift.NOT_OPEN, "gateway down") }
	_, err := c.Queue().Next(t.Context(), 0, 0, queue.Limits{Max: 1})
	if err == nil || !IsRetryable(err) || !strings.Contains(err.Error(), "gave up after 4 tries") {
		t.Fatalf("Next against a dead gateway: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg := DefaultConfig()
	cfg.Addr, cfg.Retries, cfg.RetryBackoff = addr, 1, time.Millisecond
	_, err = New(t.Context(), cfg, nil, nil)
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "refused") || !IsRetryable(err) {
		t.Fatalf("New(%s): %v, want a retryable error naming the address", addr, err)
	}
}

// A gateway that accepts and never answers: ctx ends the call, and the error says so.
func TestContextCancelsCall(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cfg := DefaultConfig()
	cfg.Addr = l.Addr().String()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = New(ctx, cfg, nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), cfg.Addr) {
		t.Fatalf("New against a silent gateway: %v, want the deadline error naming %s", err, cfg.Addr)
	}
}

func TestClosed(t *testing.T) {
	c := newFakeClient(newFakeHBase(), quickConfig())
	c.Close()
	if _, err := c.Queue().Count(t.Context(), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Count on a closed client: %v", err)
	}
}

func TestEnsureSchemaNamespace(t *testing.T) {
	f := newFakeHBase()
	cfg := quickConfig()
	cfg.Namespace = "crawl"
	c := newFakeClient(f, cfg)
	if err := c.EnsureSchema(t.Context()); err != nil {
		t.Fatalf("second EnsureSchema: %v", err)
	}
	if !f.ns["crawl"] || f.calls["createNamespace"] != 1 || f.calls["createTable"] != 4 {
		t.Fatalf("namespace %v, createNamespace %d, createTable %d; want created once each", f.ns, f.calls["createNamespace"], f.calls["createTable"])
	}
	for _, n := range []string{"crawl:frontier_states", "crawl:frontier_queue", "crawl:frontier_metadata", "crawl:frontier_domain_metadata"} {
		if _, ok := f.tables[n]; !ok {
			t.Errorf("table %s missing", n)
		}
	}
}

func TestMetricsSharedRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFakeHBase()
	dial := func(context.Context) (*conn, error) { return &conn{svc: f}, nil }
	a := newClient(quickConfig(), nil, reg, dial)
	b := newClient(quickConfig(), nil, reg, dial) // must not panic
	for _, c := range []*Client{a, b} {
		if err := c.EnsureSchema(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var calls float64
	for _, mf := range mfs {
		if mf.GetName() == "frontier_hbase_calls_total" {
			for _, m := range mf.GetMetric() {
				calls += m.GetCounter().GetValue()
			}
		}
	}
	if calls != 8 { // one call per table and client
		t.Errorf("frontier_hbase_calls_total = %v, want 8", calls)
	}
}

// Errors that retrying cannot fix are returned at once, and name the fix.
func TestUnfixableErrorsNameTheFix(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"missing table (message is the table name)", &thrift2.TIOError{Message: thrift2Str("frontier_states")}, "deploy/hbase-schema.sh"},
		{"missing table (exception named)", &thrift2.TIOError{Message: thrift2Str("org.apache.hadoop.hbase.TableNotFoundException: frontier_states")}, "deploy/hbase-schema.sh"},
		{"an HTTP port", thrift.NewTTransportException(thrift.UNKNOWN_TRANSPORT_EXCEPTION, "Incorrect frame size (1213486160)"), "does not speak Thrift"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeHBase()
			cfg := quickConfig()
			cfg.Retries = -1 // would retry forever if it were retryable
			c := newFakeClient(f, cfg)
			f.fail = func(op string) error {
				if op == "putMultiple" {
					return tc.err
				}
				return nil
			}
			err := c.States().Put(t.Context(), []frontier.Fingerprint{{1}}, []state.Entry{{State: frontier.Crawled}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if f.calls["putMultiple"] != 1 {
				t.Errorf("putMultiple called %d times, want 1 (not retried)", f.calls["putMultiple"])
			}
		})
	}
}

// With Retries = -1 a transient failure is retried until it clears, however long, and the outage is reported
// while it lasts.
func TestOutageWaitedOut(t *testing.T) {
	f := newFakeHBase()
	cfg := quickConfig()
	cfg.Retries = -1
	c := newFakeClient(f, cfg)
	failures := 50
	f.fail = func(op string) error {
		if op == "putMultiple" && failures > 0 {
			failures--
			if failures == 25 && c.Unreachable() == nil {
				t.Error("Unreachable() is nil during the outage")
			}
			return thrift.NewTTransportException(thrift.NOT_OPEN, "connection refused")
		}
		return nil
	}
	if err := c.States().Put(t.Context(), []frontier.Fingerprint{{1}}, []state.Entry{{State: frontier.Crawled}}); err != nil {
		t.Fatalf("Put through 50 failures: %v", err)
	}
	if err := c.Unreachable(); err != nil {
		t.Errorf("Unreachable() after recovery = %v", err)
	}
}
