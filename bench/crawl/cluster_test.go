//go:build integration

package crawl

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/partition"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/strategyworker"
)

var (
	flagClusterSpiders = flag.Int("crawl.cluster.spiders", 2, "spiders = strategy workers = spider-log and spider-feed partitions of the cluster crawl")
	flagClusterDBW     = flag.Int("crawl.cluster.dbworkers", 1, "DB workers (and scoring-log partitions) of the cluster crawl")
)

// clusterCrawl runs spiders, strategy workers and DB workers as goroutines of this process over real Kafka and
// HBase (topics and tables of their own), each DB worker with its own Kafka client so that they share the
// partitions as separate processes would. It returns when the crawl is finished: every group committed
// everything and the queue is empty, for a quiet second.
func clusterCrawl(t *testing.T, seeds []string, rt http.RoundTripper, reg *prometheus.Registry) {
	t.Helper()
	kafkaAddr, hbaseAddr := frontiertest.Server(t, "FRONTIER_TEST_KAFKA"), frontiertest.Server(t, "FRONTIER_TEST_HBASE")
	ctx, cancel := context.WithTimeout(t.Context(), *flagTimeout)
	defer cancel()
	n, ndb := *flagClusterSpiders, *flagClusterDBW
	run := fmt.Sprintf("bench%d", time.Now().UnixNano()%1e9)
	kcfg := kafkabus.DefaultConfig()
	kcfg.Brokers, kcfg.ClientID = []string{kafkaAddr}, run
	kcfg.SpiderLog = kafkabus.StreamConfig{Topic: run + "-done", Partitions: n}
	kcfg.ScoringLog = kafkabus.StreamConfig{Topic: run + "-score", Partitions: ndb}
	kcfg.SpiderFeed = kafkabus.StreamConfig{Topic: run + "-todo", Partitions: n}
	if err := kafkabus.EnsureTopics(ctx, kcfg.Brokers, []kafkabus.TopicSpec{
		{Name: kcfg.SpiderLog.Topic, Partitions: n}, {Name: kcfg.ScoringLog.Topic, Partitions: ndb}, {Name: kcfg.SpiderFeed.Topic, Partitions: n},
	}); err != nil {
		t.Fatal(err)
	}
	newBus := func(name string) *kafkabus.Bus {
		c := kcfg
		c.ClientID = run + "-" + name
		b, err := kafkabus.New(c, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
	b := newBus("main")

	hcfg := hbase.DefaultConfig()
	hcfg.Addr, hcfg.TablePrefix = hbaseAddr, run+"_"
	if err := hbase.EnsureSchema(ctx, hcfg); err != nil {
		t.Fatal(err)
	}
	hb, err := hbase.New(ctx, hcfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := hb.DropTables(context.WithoutCancel(ctx)); err != nil {
			t.Logf("drop tables: %v", err)
		}
		hb.Close()
	}()

	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := codec.Msgpack{}
	runCtx, stop := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(runCtx)
	first := func(i int) prometheus.Registerer {
		if i == 0 {
			return reg
		}
		return nil
	}
	for i := range ndb {
		dbw, err := dbworker.New(dbworker.DefaultConfig(), dbworker.Deps{Bus: newBus("dbw" + strconv.Itoa(i)), Codec: c,
			Queue: hb.Queue(), Pages: hb.Pages(), Registerer: first(i)})
		if err != nil {
			t.Fatal(err)
		}
		g.Go(func() error { return dbw.Run(gctx) })
	}
	for p := range n {
		sw, err := strategyworker.New(strategyworker.DefaultConfig(), strategyworker.Deps{Bus: b, Codec: c,
			States: hb.States(), Fingerprint: id.Fingerprint, Partition: p})
		if err != nil {
			t.Fatal(err)
		}
		g.Go(func() error { return sw.Run(gctx) })
	}
	seedFile := writeSeeds(t, seeds)
	for p := range n {
		feed, err := b.Consumer(gctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{p})
		if err != nil {
			t.Fatal(err)
		}
		defer feed.Close()
		out, err := b.Producer(gctx, bus.SpiderLog, partition.Fingerprint)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		scfg := spider.DefaultConfig()
		scfg.Delay, scfg.StateDir, scfg.ObeyRobots = 0, filepath.Join(t.TempDir(), "spider"), rt == nil
		deps := spider.Deps{Feed: feed, Log: out, Codec: c, Identity: id, Partition: p, Transport: rt, Registerer: first(p)}
		if p == 0 {
			deps.Seeds = seedFile
		}
		g.Go(func() error { return spider.Run(gctx, scfg, deps) })
	}

	var quietSince time.Time
	busy := false
	for {
		idle, err := clusterIdle(ctx, b, hb)
		if err != nil && ctx.Err() == nil {
			t.Fatal(err)
		}
		switch {
		case !idle:
			busy, quietSince = true, time.Time{}
		case busy && quietSince.IsZero():
			quietSince = time.Now()
		}
		if busy && !quietSince.IsZero() && time.Since(quietSince) > time.Second {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the crawl did not finish in %v", *flagTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// clusterIdle reports whether every group has committed everything on every stream and the queue is empty.
func clusterIdle(ctx context.Context, b *kafkabus.Bus, hb *hbase.Client) (bool, error) {
	for _, sg := range []struct {
		s bus.Stream
		g string
	}{
		{bus.SpiderFeed, bus.GroupSpiderFeed},
		{bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog},
		{bus.SpiderLog, bus.GroupDBWorkerSpiderLog},
		{bus.ScoringLog, bus.GroupDBWorkerScoringLog},
	} {
		lags, err := b.Lag(ctx, sg.s, sg.g)
		if err != nil {
			return false, err
		}
		for _, l := range lags {
			if l != 0 {
				return false, nil
			}
		}
	}
	for p := range b.Partitions(bus.SpiderFeed) {
		n, err := hb.Queue().Count(ctx, p)
		if err != nil || n != 0 {
			return false, err
		}
	}
	return true, nil
}

// TestClusterSim crawls the simulated web with the cluster roles over real Kafka and HBase.
func TestClusterSim(t *testing.T) {
	hosts, pages, err := parseSize(*flagSim)
	if err != nil {
		t.Fatal(err)
	}
	sw := newSimWeb(hosts, pages, *flagLinks, *flagLatency)
	reg := prometheus.NewRegistry()
	m := startMeter()
	start := time.Now()
	defer progress(t, sw, start)()
	clusterCrawl(t, sw.seeds(), sw, reg)
	cpu := m.done()
	wall := time.Duration(sw.last.Load() - start.UnixNano())
	secs := wall.Seconds()
	scheduled, dispatched := counter(t, reg, "frontier_dbworker_scheduled_total"), counter(t, reg, "frontier_dbworker_feed_requests_total")
	links := counter(t, reg, "frontier_spider_links_total")
	reportMem(t, m, fmt.Sprintf("cluster sim %s links %d: %d spiders, %d strategy workers, %d DB workers", *flagSim, *flagLinks,
		*flagClusterSpiders, *flagClusterSpiders, *flagClusterDBW), sw.unique.Load(), wall, cpu, m.peakRSS.Load(), m.load,
		"duplicates", sw.dups.Load(), "of pages", int64(hosts*pages),
		"discovered URLs/s (spider 0)", links/secs, "scheduled URLs/s (DB worker 0)", scheduled/secs,
		"dispatched URLs/s (DB worker 0)", dispatched/secs)
	if got := sw.unique.Load(); got != int64(hosts*pages) || sw.dups.Load() != 0 {
		t.Errorf("fetched %d of %d pages, %d twice", got, hosts*pages, sw.dups.Load())
	}
}

// TestClusterHTTP crawls the loopback web (child process) with the cluster roles over real Kafka and HBase.
func TestClusterHTTP(t *testing.T) {
	hosts, pages, err := parseSize(*flagWeb)
	if err != nil {
		t.Fatal(err)
	}
	w := startWeb(t, hosts, pages)
	reg := prometheus.NewRegistry()
	m := startMeter()
	start := time.Now()
	clusterCrawl(t, w.Seeds, nil, reg)
	wall := time.Since(start)
	cpu := m.done()
	c := w.check(t)
	reportMem(t, m, fmt.Sprintf("cluster HTTP %s: %d spiders, %d strategy workers, %d DB workers", *flagWeb,
		*flagClusterSpiders, *flagClusterSpiders, *flagClusterDBW), int64(c.Reachable-c.Missing), wall, cpu, m.peakRSS.Load(), m.load,
		"reachable", c.Reachable, "missing", c.Missing, "fetched twice", c.Twice, "web server CPU", c.CPU,
		"note", "wall includes the final quiet second")
	if c.Missing != 0 || c.Twice != 0 {
		t.Errorf("coverage: %d of %d reachable pages missing, %d fetched twice", c.Missing, c.Reachable, c.Twice)
	}
}
