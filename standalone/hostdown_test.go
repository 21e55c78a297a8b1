package standalone

import (
	"slices"
	"strings"
	"testing"
	"time"

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
	// Every page of the dead host that the crawl knew of and that never got a 2xx answer (those pending at the
	// moment it went down, and any whose answer the closing connection cut) ends in ERROR, refused. A page
	// that only those link to is never known: it is not a URL the frontier lost.
	lost := site.NeverServed(down)
	known := site.Known()
	if n := acct.ErrorReasons[spider.ErrNameConnRefused]; n != len(lost) || acct.Errors != len(lost) {
		t.Errorf("%d errors %v, want %d, all %s (the pages of %s never served: %v)", acct.Errors, acct.ErrorReasons, len(lost), spider.ErrNameConnRefused, down.Name, lost)
	}
	for _, u := range pending {
		if !slices.Contains(lost, u) {
			t.Errorf("%s was served after %s went down", u, down.Name)
		}
	}
	// The other hosts are crawled to the end (their pages that only the dead host's lost pages link to
	// excepted): every reachable page fetched, and a 2xx for every page.
	check, err := site.CheckCrawlWith(web.ReachOptions{}, site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	other := func(us []string) []string {
		return slices.DeleteFunc(slices.Clone(us), func(u string) bool { return strings.HasPrefix(u, down.Origin+"/") || !known[u] })
	}
	if m, u := other(check.Missing), other(check.Unserved); len(m) > 0 || len(u) > 0 {
		t.Errorf("on the hosts that stayed up: missing %v, never served %v", m, u)
	}
	if len(check.Twice) > 0 {
		t.Errorf("served twice: %v", check.Twice)
	}
	if sum.Queued != 0 {
		t.Errorf("%d still queued", sum.Queued)
	}
}
