package embedded

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/frontiercrawl/frontier"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
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
	id, err := frontier.NewIdentity("sha1", frontier.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(t.Context(), cfg, Deps{Seeds: seeds, Identity: id, DialContext: site.DialContext, Logger: frontiertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary: %+v", sum)

	want, err := site.Reachable(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	fetched := map[string]int{} // URL (as the site normalises it) → requests
	for _, r := range site.Requests() {
		if r.Target == "/robots.txt" {
			continue
		}
		u, err := web.Normalize("", "http://"+r.Host+r.Target)
		if err != nil {
			t.Fatal(err)
		}
		fetched[u]++
	}
	var missing []string
	for _, u := range want.URLs(web.OK, web.HTTPError, web.Redirect, web.Large) {
		if fetched[u] == 0 {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d reachable URLs were never fetched, e.g. %v", len(missing), len(want), missing[:min(5, len(missing))])
	}
	for u, n := range fetched {
		// The redirect loop's hops repeat within one request, until the spider's redirect limit.
		if n > 1 && !strings.Contains(u, "/r/loop/") {
			t.Errorf("%s fetched %d times", u, n)
		}
	}
	for _, u := range want.URLs(web.RobotsDisallowed) {
		if fetched[u] > 0 {
			t.Errorf("%s is disallowed by robots.txt but was fetched", u)
		}
	}
	if sum.Queued != 0 || sum.Pages == 0 {
		t.Errorf("summary %+v: want pages fetched and nothing left queued", sum)
	}
}
