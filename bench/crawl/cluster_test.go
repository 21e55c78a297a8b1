//go:build integration

package crawl

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
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
	n, ndb := *flagClusterSpiders, *flagClusterDBW
	env := cluster.New(t, "bench", cluster.Partitions{SpiderLog: n, ScoringLog: ndb, SpiderFeed: n})
	ctx, cancel := context.WithTimeout(t.Context(), *flagTimeout)
	defer cancel()
	r := cluster.Roles{DBWorkers: ndb, DBWorker: dbworker.DefaultConfig(), StrategyWorker: strategyworker.DefaultConfig(),
		Spider: spider.DefaultConfig(), Seeds: seeds, Transport: rt, Registerer: reg}
	r.Spider.Delay, r.Spider.ObeyRobots = 0, rt == nil
	c := cluster.Start(t, ctx, env, r)
	c.WaitIdle(t, ctx, time.Second)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
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
