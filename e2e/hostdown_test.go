//go:build integration

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/spider"
	_ "github.com/frontiercrawl/frontier/strategy/all"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// TestClusterCrawlHostDownWithRetriesLeft is standalone's TestCrawlHostDownWithRetriesLeft on the cluster (2
// spiders, 2 strategy workers, a DB worker, real Kafka and HBase): a host dies for good once every page of it
// that the crawl could know of was asked for and answered (web.Site.DownWhenOnlyRetriesLeft), so all it has
// left are the retries of its pages that failed once. Each of those pages ends in ERROR, refused, in HBase; the other hosts are crawled to
// the end; the crawl goes quiet with nothing queued and no URL stranded.
func TestClusterCrawlHostDownWithRetriesLeft(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = 4, 30, true
	wcfg.Seed = uint64(time.Now().UnixNano()) // which pages fail differs from run to run; logged below
	wcfg.Hostile = web.Hostile{Failing: 0.3}
	t.Logf("web seed %d", wcfg.Seed)
	site := web.Start(t, wcfg)
	down := site.Hosts()[0]
	reach, err := site.Reachable(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	pages := slices.DeleteFunc(reach.URLs(), func(u string) bool { return !strings.HasPrefix(u, down.Origin+"/") })

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	env := cluster.New(t, "hostdown", cluster.Partitions{SpiderLog: 2, ScoringLog: 1, SpiderFeed: 2})
	r := cluster.FastRoles()
	r.Seeds, r.DialContext, r.Logger = site.Seeds(), site.DialContext, frontiertest.Logger(t)
	r.StrategyWorker = strategyworker.DefaultConfig()
	// Retries wait 9.5–10.5 s: the host's first attempts, which take a few loops of spider, strategy worker
	// and DB worker, end before its first retry is due; the whole-host back-off is off so that no run of
	// failures delays them past it.
	r.StrategyWorker.Retry.Backoff, r.StrategyWorker.Retry.MaxBackoff = 10*time.Second, 10*time.Second
	r.Spider.HostFailures = 0
	r.EditStrategyWorker = func(c *cluster.Cluster, _ int, d *strategyworker.Deps) { d.Domains = c.HBase.Domains() }

	watch := site.DownWhenOnlyRetriesLeft(down)
	c := cluster.Start(t, ctx, env, r)
	c.WaitIdle(t, ctx, time.Second) // checks that no URL is stranded
	wentAt, pending := watch.Stop()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if wentAt == 0 {
		t.Fatalf("%s never went down: a page of it that the crawl knew of was never asked for", down.Name)
	}
	t.Logf("%s went down after %v with %d of its %d pages failed once and due for a retry: %v", down.Name, wentAt.Round(time.Millisecond), len(pending), len(pages), pending)
	if len(pending) == 0 {
		t.Fatalf("%s had no retry left when it went down (web seed %d): the test tested nothing", down.Name, wcfg.Seed)
	}

	acct, err := frontiertest.CheckAccounting(ctx, frontiertest.AccountingStores{States: c.HBase.States(), Queue: c.HBase.Queue(), Pages: c.HBase.Pages()})
	if err != nil {
		t.Fatal(err)
	}
	frontiertest.CheckHostDown(t, site, down, pending, acct, spider.ErrNameConnRefused)
}
