//go:build integration

package e2e

import (
	"context"
	"fmt"
	"github.com/frontiercrawl/frontier/identity"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/partition"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/state"
	_ "github.com/frontiercrawl/frontier/strategy/all"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// TestClusterCrawl crawls the synthetic web with 2 spiders, 2 strategy workers and a DB worker over real Kafka
// and HBase, and checks that every page a polite crawler reaches was fetched exactly once, that robots.txt was
// obeyed, and that the states in HBase say so.
func TestClusterCrawl(t *testing.T) {
	kafkaAddr, hbaseAddr := frontiertest.Server(t, "FRONTIER_TEST_KAFKA"), frontiertest.Server(t, "FRONTIER_TEST_HBASE")
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 4, 12
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 100*time.Millisecond, 100*time.Millisecond, 1<<20
	site := web.Start(t, wcfg)
	id, hb := clusterCrawl(t, kafkaAddr, hbaseAddr, site, strategyworker.DefaultConfig())

	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if !check.OK() {
		t.Errorf("crawl of %d reachable URLs: missing %v, fetched twice %v, robots violations %v, unserved %v",
			check.Reachable, check.Missing, check.Twice, check.RobotsViolations, check.Unserved)
	}
	fetched := site.Fetches()
	// The URL-seen test's memory: a seed the servers answered is CRAWLED in HBase; one the spider could not
	// fetch (host3's robots.txt answers 503) is ERROR.
	fps := make([]frontier.Fingerprint, len(site.Seeds()))
	for i, s := range site.Seeds() {
		if fps[i], err = id.Fingerprint(s); err != nil {
			t.Fatal(err)
		}
	}
	entries, found := make([]state.Entry, len(fps)), make([]bool, len(fps))
	if err := hb.States().Get(context.Background(), fps, entries, found); err != nil {
		t.Fatal(err)
	}
	for i, s := range site.Seeds() {
		wantState := frontier.Error
		if u, _ := web.Normalize("", s); fetched[u] > 0 {
			wantState = frontier.Crawled
		}
		if !found[i] || entries[i].State != wantState {
			t.Errorf("state of seed %s in HBase = %v (found %v), want %v", s, entries[i].State, found[i], wantState)
		}
	}
}

// TestClusterCrawlHostileWeb is issue 9's acceptance on the cluster: a 12-host × 150-page web with redirects
// (found before and after their targets, cross-host, chains, a loop), transient failures (500, 502, 503 twice,
// 504, 429 with Retry-After), infinite URL spaces on every host and links out of the seeds' domains, crawled
// by 2 spiders, 2 strategy workers and a DB worker over real Kafka and HBase: every reachable in-scope page is
// fetched, none is served twice, robots.txt is obeyed, the trap pages stay within the scope's limits and the
// crawl goes quiet by itself.
func TestClusterCrawlHostileWeb(t *testing.T) {
	kafkaAddr, hbaseAddr := frontiertest.Server(t, "FRONTIER_TEST_KAFKA"), frontiertest.Server(t, "FRONTIER_TEST_HBASE")
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 12, 150
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 100*time.Millisecond, 100*time.Millisecond, 1<<20
	wcfg.Seed = uint64(time.Now().UnixNano())
	wcfg.Hostile = web.Hostile{Redirects: 0.2, Failing: 0.1, Traps: true}
	t.Logf("web seed %d", wcfg.Seed)
	site := web.Start(t, wcfg)
	swcfg := strategyworker.DefaultConfig()
	swcfg.Scope.MaxQueryVariants = 20
	start := time.Now()
	clusterCrawl(t, kafkaAddr, hbaseAddr, site, swcfg)
	elapsed := time.Since(start)

	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	traps := site.TrapFetches()
	t.Logf("quiet after %v: reachable %d, coverage %.4f, served twice %d, unserved %d, robots violations %d, trap fetches %v",
		elapsed, check.Reachable, check.Coverage(), len(check.Twice), len(check.Unserved), len(check.RobotsViolations), traps)
	if !check.OK() {
		t.Errorf("missing %v, served twice %v, robots violations %v, unserved %v", check.Missing, check.Twice, check.RobotsViolations, check.Unserved)
	}
	sc := swcfg.Scope
	limit := 3*sc.MaxQueryVariants + sc.MaxRepeatedSegments + sc.MaxPathSegments - 1
	for h, n := range traps {
		if n > limit {
			t.Errorf("%s: %d trap pages fetched, want <= %d", h, n, limit)
		}
	}
}

// clusterCrawl runs 2 spiders, 2 strategy workers (with swcfg) and a DB worker over Kafka topics and HBase
// tables of their own, crawls site from its home pages until every stream is committed and the queue is
// empty for a quiet second, and returns the identity and the HBase client (closed, its tables dropped, at the
// test's end).
func clusterCrawl(t *testing.T, kafkaAddr, hbaseAddr string, site *web.Site, swcfg strategyworker.Config) (identity.Identifier, *hbase.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	log := frontiertest.Logger(t)
	run := fmt.Sprintf("e2e%d", time.Now().UnixNano()%1e9)

	// Streams on topics of their own.
	kcfg := kafkabus.DefaultConfig()
	kcfg.Brokers, kcfg.ClientID = []string{kafkaAddr}, run
	kcfg.SpiderLog = kafkabus.StreamConfig{Topic: run + "-done", Partitions: 2}
	kcfg.ScoringLog = kafkabus.StreamConfig{Topic: run + "-score", Partitions: 1}
	kcfg.SpiderFeed = kafkabus.StreamConfig{Topic: run + "-todo", Partitions: 2}
	if err := kafkabus.EnsureTopics(ctx, kcfg.Brokers, []kafkabus.TopicSpec{
		{Name: kcfg.SpiderLog.Topic, Partitions: 2}, {Name: kcfg.ScoringLog.Topic, Partitions: 1}, {Name: kcfg.SpiderFeed.Topic, Partitions: 2},
	}); err != nil {
		t.Fatal(err)
	}
	b, err := kafkabus.New(kcfg, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	// Tables of their own.
	hcfg := hbase.DefaultConfig()
	hcfg.Addr, hcfg.TablePrefix = hbaseAddr, run+"_"
	if err := hbase.EnsureSchema(ctx, hcfg); err != nil {
		t.Fatal(err)
	}
	hb, err := hbase.New(ctx, hcfg, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hb.DropTables(context.Background()); err != nil {
			t.Logf("drop tables: %v", err)
		}
		hb.Close()
	})

	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(site.Seeds(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := codec.Msgpack{}
	runCtx, stop := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(runCtx)

	dbcfg := dbworker.DefaultConfig()
	dbcfg.PollInterval = 50 * time.Millisecond
	dbw, err := dbworker.New(dbcfg, dbworker.Deps{Bus: b, Codec: c, Queue: hb.Queue(), Pages: hb.Pages(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	g.Go(func() error { return dbw.Run(gctx) })
	for p := range 2 {
		// The domain metadata store is shared: the seeds' scope and the budgets live there.
		sw, err := strategyworker.New(swcfg, strategyworker.Deps{Bus: b, Codec: c,
			States: hb.States(), Domains: hb.Domains(), Fingerprint: id.Fingerprint, Partition: p, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		g.Go(func() error { return sw.Run(gctx) })
	}
	for p := range 2 {
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
		scfg.Delay, scfg.RequestTimeout, scfg.MaxBodyBytes = 10*time.Millisecond, time.Second, 256<<10
		scfg.CommitInterval, scfg.StateDir = 100*time.Millisecond, filepath.Join(t.TempDir(), "spider")
		deps := spider.Deps{Feed: feed, Log: out, Codec: c, Identity: id, Partition: p, Logger: log, DialContext: site.DialContext}
		if p == 0 {
			deps.Seeds = seeds
		}
		g.Go(func() error { return spider.Run(gctx, scfg, deps) })
	}

	// Wait until every stream is committed by every group and the queue is empty, for a quiet second.
	quiet := time.Time{}
	busy := false
	for {
		idle, err := idle(ctx, b, hb)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !idle:
			busy, quiet = true, time.Time{}
		case busy && quiet.IsZero():
			quiet = time.Now()
		}
		if busy && !quiet.IsZero() && time.Since(quiet) > time.Second {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the crawl did not finish in time")
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return id, hb
}

// idle reports whether every group has committed everything on every stream and the queue is empty.
func idle(ctx context.Context, b *kafkabus.Bus, hb *hbase.Client) (bool, error) {
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
