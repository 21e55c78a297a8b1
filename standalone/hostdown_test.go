package standalone

import (
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/spider"
)

// TestCrawlHostDownWithRetriesLeft: a host dies for good once every page of it that the crawl could know of
// was asked for and answered (web.Site.DownWhenOnlyRetriesLeft), so all it has left are the retries of its
// pages that failed once. Each of those retries is refused, and the page must end in ERROR with the refusal
// as its reason (connection refused is not retried), while the other hosts are crawled to the end and the
// crawl finishes by itself with no URL stranded. e2e's TestClusterCrawlHostDownWithRetriesLeft is the same
// test on the cluster.
func TestCrawlHostDownWithRetriesLeft(t *testing.T) {
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
	var pages []string // down's reachable pages
	for _, u := range reach.URLs() {
		if strings.HasPrefix(u, down.Origin+"/") {
			pages = append(pages, u)
		}
	}

	cfg := hostileCrawlConfig()
	// Retries wait 4.5–5.5 s (the second one too), so the host's first attempts (200–400 ms here, a few
	// seconds on a loaded machine) end before its first retry is due, and the whole-host back-off is off so
	// that no run of failures delays them past it.
	cfg.StrategyWorker.Retry.Backoff, cfg.StrategyWorker.Retry.MaxBackoff = 5*time.Second, 5*time.Second
	cfg.Spider.HostFailures = 0
	deps := siteDeps(t, site, &cfg)

	watch := site.DownWhenOnlyRetriesLeft(down)
	sum, err := Run(t.Context(), cfg, deps)
	wentAt, pending := watch.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if wentAt == 0 {
		t.Fatalf("%s never went down: a page of it that the crawl knew of was never asked for", down.Name)
	}
	t.Logf("%s went down after %v with %d of its %d pages failed once and due for a retry: %v", down.Name, wentAt.Round(time.Millisecond), len(pending), len(pages), pending)
	if len(pending) == 0 {
		t.Fatalf("%s had no retry left when it went down (web seed %d): the test tested nothing", down.Name, wcfg.Seed)
	}

	acct := requireAccounted(t, cfg.DataDir)
	t.Logf("summary %+v", sum)
	frontiertest.CheckHostDown(t, site, down, pending, acct, spider.ErrNameConnRefused)
}
