//go:build integration

package e2e

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// TestClusterCrawlTrapWeb: the template budget on the cluster, its counts in HBase's domain metadata table.
// Every host serves an endless /cal/N chain (host1 also ?date=), the last host a 40-deep chain of distinct
// paths; with template_budget 30 (short: each chain hop is a round of the crawl loop) the crawl goes quiet by
// itself with 30 fetches a chain, every real page fetched, and HBase holds 30 for each host's /cal/{x}.
func TestClusterCrawlTrapWeb(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = 4, 10, true
	wcfg.Hostile = web.Hostile{Chains: true, DeepPages: 40}
	site := web.Start(t, wcfg)
	swcfg := strategyworker.DefaultConfig()
	const budget = 30
	swcfg.Scope.TemplateBudget = budget
	start := time.Now()
	c := clusterCrawl(t, site, swcfg)
	check, err := site.CheckCrawlWith(web.ReachOptions{InScope: web.SeedDomains(site.Seeds()...)}, site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	traps := site.TrapFetches()
	t.Logf("quiet after %v: reachable %d, coverage %.4f, served twice %d, trap fetches %v",
		time.Since(start), check.Reachable, check.Coverage(), len(check.Twice), traps)
	if check.Coverage() != 1 || len(check.Twice) > 0 {
		t.Errorf("missing %v, twice %v", check.Missing, check.Twice)
	}
	var keys []string
	for i, h := range site.Hosts() {
		want := budget
		if i == 0 {
			want = 2 * budget
		}
		if traps[h.Name] != want {
			t.Errorf("%s: %d trap fetches, want %d", h.Name, traps[h.Name], want)
		}
		u, _ := url.Parse(h.Origin + "/cal/1")
		keys = append(keys, scope.TemplateKey(u))
	}
	got, err := c.HBase.Domains().Get(context.Background(), "scope_template_pages", keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range got {
		if n != budget {
			t.Errorf("%s: HBase counts %d URLs of /cal/{x}, want %d", site.Hosts()[i].Name, n, budget)
		}
	}
}
