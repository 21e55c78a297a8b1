//go:build integration

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/state"
	_ "github.com/frontiercrawl/frontier/strategy/all"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// TestClusterCrawl crawls the synthetic web with 2 spiders, 2 strategy workers and a DB worker over real Kafka
// and HBase, and checks that every page a polite crawler reaches was fetched exactly once, that robots.txt was
// obeyed, and that the states in HBase say so.
func TestClusterCrawl(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 4, 12
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 100*time.Millisecond, 100*time.Millisecond, 1<<20
	site := web.Start(t, wcfg)
	c := clusterCrawl(t, site, strategyworker.DefaultConfig())
	id, hb := c.Identity, c.HBase

	cluster.CheckCrawl(t, site, false)
	fetched := site.Fetches()
	// The URL-seen test's memory: a seed the servers answered is CRAWLED in HBase; one the spider could not
	// fetch (host3's robots.txt answers 503) is ERROR.
	fps := make([]frontier.Fingerprint, len(site.Seeds()))
	for i, s := range site.Seeds() {
		var err error
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
	clusterCrawl(t, site, swcfg)
	elapsed := time.Since(start)

	check := cluster.CheckCrawl(t, site, false)
	traps := site.TrapFetches()
	t.Logf("quiet after %v: reachable %d, coverage %.4f, served twice %d, unserved %d, robots violations %d, trap fetches %v",
		elapsed, check.Reachable, check.Coverage(), len(check.Twice), len(check.Unserved), len(check.RobotsViolations), traps)
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
// empty for a quiet second, and returns the cluster (its HBase client open until the test's end).
func clusterCrawl(t *testing.T, site *web.Site, swcfg strategyworker.Config) *cluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	env := cluster.New(t, "e2e", cluster.Partitions{SpiderLog: 2, ScoringLog: 1, SpiderFeed: 2})
	r := cluster.FastRoles()
	r.StrategyWorker, r.Seeds, r.DialContext, r.Logger = swcfg, site.Seeds(), site.DialContext, frontiertest.Logger(t)
	// The domain metadata store is shared: the seeds' scope and the budgets live there.
	r.EditStrategyWorker = func(c *cluster.Cluster, _ int, d *strategyworker.Deps) { d.Domains = c.HBase.Domains() }
	c := cluster.Start(t, ctx, env, r)
	c.WaitIdle(t, ctx, time.Second)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	return c
}
