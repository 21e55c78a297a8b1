package standalone

import (
	"github.com/frontiercrawl/frontier/identity"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/scope"
	_ "github.com/frontiercrawl/frontier/strategy/all"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestCrawlSyntheticWeb crawls a multi-host site with every feature (robots.txt rules, redirects, errors, URL
// variants, a hanging host, a large page) from its home pages, and compares what the server saw with the
// site's ground truth: every page a polite crawler reaches is fetched, and no URL is fetched twice.
func TestCrawlSyntheticWeb(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 6, 15
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 100*time.Millisecond, 100*time.Millisecond, 2<<20
	site := web.Start(t, wcfg)

	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("# the home pages\n"+strings.Join(site.Seeds(), "\n")+"\nnot a url\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.DataDir = dir
	cfg.Spiders, cfg.StrategyWorkers = 2, 2
	cfg.Spider.Delay = 10 * time.Millisecond
	cfg.Spider.RequestTimeout = time.Second
	cfg.Spider.MaxBodyBytes = 1 << 20
	cfg.StopWhenDone, cfg.QuietPeriod = true, 500*time.Millisecond
	cfg.Pebble.Sync = false
	cfg.StrategyWorker.Scope.Follow = scope.FollowAny // the special hosts (slow, hanging, refused, …) too
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(t.Context(), cfg, Deps{Seeds: seeds, Identity: id, DialContext: site.DialContext, Logger: frontiertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	requireAccounted(t, cfg.DataDir)
	t.Logf("summary: %+v", sum)

	check, err := site.CheckCrawlWith(web.ReachOptions{}, site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if !check.OK() {
		t.Errorf("crawl of %d reachable URLs: missing %v, fetched twice %v, robots violations %v",
			check.Reachable, check.Missing, check.Twice, check.RobotsViolations)
	}
	if sum.Queued != 0 || sum.Pages == 0 {
		t.Errorf("summary %+v: want pages fetched and nothing left queued", sum)
	}
}
