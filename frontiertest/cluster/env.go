package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/identity"
)

// Partitions are the partition counts of a run's streams (the control stream always has one).
type Partitions struct {
	SpiderLog, ScoringLog, SpiderFeed int
}

// Env is one test's own share of the shared servers: Kafka topics and HBase tables named after the run. It is
// made by New and not changed afterwards.
type Env struct {
	// Name names the run: its topics are Name-done, Name-score, Name-todo and Name-control, its tables start
	// with Name_.
	Name string
	// Kafka is kafkabus's default configuration with the run's brokers and topics.
	Kafka kafkabus.Config
	// HBase is hbase's default configuration with the run's gateway and table prefix (New only).
	HBase  hbase.Config
	tables bool
}

// New creates the topics and tables of a run named prefix followed by a number, on the servers that
// FRONTIER_TEST_KAFKA and FRONTIER_TEST_HBASE name (the test is skipped when they are unset, and fails under
// CI=true). The tables are dropped and the topics deleted when the test ends, each with a client of its own,
// so that they go even when the test restarted a server, and repeated runs leave nothing on a long-lived
// broker or gateway.
func New(tb testing.TB, prefix string, p Partitions) *Env {
	tb.Helper()
	hbaseAddr := frontiertest.Server(tb, "FRONTIER_TEST_HBASE")
	e := Topics(tb, prefix, p)
	e.HBase.Addr, e.HBase.TablePrefix, e.tables = hbaseAddr, e.Name+"_", true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := hbase.EnsureSchema(ctx, e.HBase); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		hb, err := hbase.New(ctx, e.HBase, nil, nil)
		if err != nil {
			tb.Logf("drop tables: %v", err)
			return
		}
		defer hb.Close()
		if err := hb.DropTables(ctx); err != nil {
			tb.Logf("drop tables: %v", err)
		}
	})
	return e
}

// Topics is New without HBase: the run's topics only, on the Kafka that FRONTIER_TEST_KAFKA names. They are
// deleted when the test ends.
func Topics(tb testing.TB, prefix string, p Partitions) *Env {
	tb.Helper()
	kafkaAddr := frontiertest.Server(tb, "FRONTIER_TEST_KAFKA")
	name := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e9)
	e := &Env{Name: name, Kafka: kafkabus.DefaultConfig(), HBase: hbase.DefaultConfig()}
	e.Kafka.Brokers, e.Kafka.ClientID = []string{kafkaAddr}, name
	e.Kafka.SpiderLog = kafkabus.StreamConfig{Topic: name + "-done", Partitions: p.SpiderLog}
	e.Kafka.ScoringLog = kafkabus.StreamConfig{Topic: name + "-score", Partitions: p.ScoringLog}
	e.Kafka.SpiderFeed = kafkabus.StreamConfig{Topic: name + "-todo", Partitions: p.SpiderFeed}
	e.Kafka.Control = kafkabus.StreamConfig{Topic: name + "-control", Partitions: 1}
	var specs []kafkabus.TopicSpec
	for _, s := range []kafkabus.StreamConfig{e.Kafka.SpiderLog, e.Kafka.ScoringLog, e.Kafka.SpiderFeed, e.Kafka.Control} {
		specs = append(specs, kafkabus.TopicSpec{Name: s.Topic, Partitions: s.Partitions})
	}
	e.CreateTopics(tb, specs...)
	return e
}

// CreateTopics creates more topics on the run's Kafka (e.g. one a foreign program needs); like the run's
// own, they are deleted when the test ends (registered before they are created, so that a creation that
// failed halfway leaves nothing either).
func (e *Env) CreateTopics(tb testing.TB, specs ...kafkabus.TopicSpec) {
	tb.Helper()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := kafkabus.DeleteTopics(ctx, e.Kafka.Brokers, names); err != nil {
			tb.Logf("delete topics: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := kafkabus.EnsureTopics(ctx, e.Kafka.Brokers, specs); err != nil {
		tb.Fatal(err)
	}
}

// Bus opens a Kafka bus on the run's topics with client id Name-client; it is closed when the test ends.
func (e *Env) Bus(tb testing.TB, client string, log *slog.Logger, reg prometheus.Registerer) *kafkabus.Bus {
	tb.Helper()
	cfg := e.Kafka
	cfg.ClientID = e.Name + "-" + client
	b, err := kafkabus.New(cfg, log, reg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = b.Close() })
	return b
}

// HBaseClient opens a client of the run's tables; it is closed when the test ends (before the tables are
// dropped).
func (e *Env) HBaseClient(tb testing.TB, log *slog.Logger, reg prometheus.Registerer) *hbase.Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hb, err := hbase.New(ctx, e.HBase, log, reg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = hb.Close() })
	return hb
}

// settings are the configuration keys (configs/common.yaml) that point a process at the run's topics and tables.
func (e *Env) settings() [][2]string {
	kv := [][2]string{{"kafka.brokers", strings.Join(e.Kafka.Brokers, ",")}}
	if e.tables {
		kv = append(kv, [2]string{"hbase.addr", e.HBase.Addr}, [2]string{"hbase.table_prefix", e.HBase.TablePrefix})
	}
	for _, s := range []struct {
		key string
		sc  kafkabus.StreamConfig
	}{{"spider_log", e.Kafka.SpiderLog}, {"scoring_log", e.Kafka.ScoringLog}, {"spider_feed", e.Kafka.SpiderFeed}, {"control", e.Kafka.Control}} {
		kv = append(kv, [2]string{"streams." + s.key + ".topic", s.sc.Topic}, [2]string{"streams." + s.key + ".partitions", fmt.Sprint(s.sc.Partitions)})
	}
	return kv
}

// Sets returns the run's topics and tables as --set key=value arguments.
func (e *Env) Sets() []string {
	var out []string
	for _, kv := range e.settings() {
		out = append(out, kv[0]+"="+kv[1])
	}
	return out
}

// YAML returns the run's topics and tables as a configuration file's streams, kafka and hbase sections, to
// which a test appends its other sections.
func (e *Env) YAML() string {
	var b strings.Builder
	var prev []string
	for _, kv := range e.settings() {
		path := strings.Split(kv[0], ".")
		same := 0
		for same < len(prev)-1 && same < len(path)-1 && prev[same] == path[same] {
			same++
		}
		for i := same; i < len(path)-1; i++ {
			fmt.Fprintf(&b, "%s%s:\n", strings.Repeat("  ", i), path[i])
		}
		val := fmt.Sprintf("%q", kv[1])
		switch {
		case kv[0] == "kafka.brokers":
			val = "[" + strings.Join(quoteEach(e.Kafka.Brokers), ", ") + "]"
		case strings.HasSuffix(kv[0], ".partitions"):
			val = kv[1]
		}
		fmt.Fprintf(&b, "%s%s: %s\n", strings.Repeat("  ", len(path)-1), path[len(path)-1], val)
		prev = path
	}
	return b.String()
}

// WriteConfig writes text, after the run's sections (YAML), to dir/name and returns its path.
func (e *Env) WriteConfig(tb testing.TB, dir, name, text string) string {
	tb.Helper()
	return writeFile(tb, filepath.Join(dir, name), e.YAML()+text)
}

// SeedFile writes seeds, one a line, to a file in a temporary directory and returns its path.
func SeedFile(tb testing.TB, seeds []string) string {
	tb.Helper()
	return writeFile(tb, filepath.Join(tb.TempDir(), "seeds.txt"), strings.Join(seeds, "\n")+"\n")
}

func writeFile(tb testing.TB, path, text string) string {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Identity returns the identity layer every test cluster uses: SHA-1 fingerprints, today's canonical URLs.
func Identity(tb testing.TB) identity.Identifier {
	tb.Helper()
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

func quoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
