package standalone

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/scope"
)

// TestCrawlTrapWeb: on a web where every host serves an endless calendar by path (/cal/N → /cal/N+1), host1
// also one by query string (?date= → the next day), and the last host a real site 300 pages deep with distinct
// paths, the default scope ends the crawl by itself, every trap bounded by the template budget (so at most
// 2 × 500 trap fetches on host1, 500 on the others) and every real page fetched, the deepest included.
// FRONTIER_TRAPS_HOSTS=1 crawls 12 hosts instead of 6.
func TestCrawlTrapWeb(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = 6, 30, true
	if os.Getenv("FRONTIER_TRAPS_HOSTS") != "" {
		wcfg.Hosts = 12
	}
	wcfg.Hostile = web.Hostile{Chains: true, DeepPages: 300}
	site := web.Start(t, wcfg)

	cfg := hostileCrawlConfig()
	cfg.StrategyWorker.Scope = scope.DefaultConfig() // the point: no limit tuned for the test
	// Every hop of a chain is one round of the crawl loop, and the spider's commit interval is part of each round
	// (spider.Config.CommitInterval): a shorter one keeps the test under a minute.
	cfg.Spider.CommitInterval = 25 * time.Millisecond
	start := time.Now()
	r := crawlSite(t, site, cfg, web.ReachOptions{InScope: web.SeedDomains(site.Seeds()...)})
	t.Logf("crawl took %v", time.Since(start))
	c := r.check
	if c.Coverage() != 1 || len(c.Missing) > 0 {
		t.Errorf("coverage %.4f: missing %v", c.Coverage(), c.Missing)
	}
	if len(c.Twice) > 0 {
		t.Errorf("served twice: %v", c.Twice)
	}
	last := site.Hosts()[len(site.Hosts())-1]
	fetched := site.Fetches()
	for k := range wcfg.Hostile.DeepPages {
		if u := last.Origin + web.DeepSlug(k); fetched[u] == 0 {
			t.Errorf("deep page %d (%s) not fetched", k, u)
			break
		}
	}
	for _, h := range site.Hosts() {
		n := r.traps[h.Name]
		if n > 1000 {
			t.Errorf("%s: %d trap fetches, want <= 1,000", h.Name, n)
		}
		if n == 0 {
			t.Errorf("%s: no trap fetched: the chains are not linked?", h.Name)
		}
	}
	if r.sum.Queued != 0 {
		t.Errorf("%d still queued", r.sum.Queued)
	}
	var hosts []string
	for h, n := range r.traps {
		hosts = append(hosts, h+"="+strconv.Itoa(n))
	}
	slices.Sort(hosts)
	t.Logf("trap fetches per host: %s", strings.Join(hosts, " "))
}
