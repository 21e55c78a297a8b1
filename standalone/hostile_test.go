package standalone

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

// hostileRun is one crawl of a site from its home pages, with what the site's servers measured.
type hostileRun struct {
	sum     Summary
	check   web.CrawlCheck
	cpu     time.Duration
	traps   map[string]int
	fetched int // requests for pages (robots.txt excluded)
}

// siteDeps points cfg at a new temporary data directory holding a seeds file of site's seeds, and returns the
// Deps of a crawl of site from them: those seeds, a sha1 identity, the site's dialer and the test's logger.
func siteDeps(t *testing.T, site *web.Site, cfg *Config) Deps {
	t.Helper()
	cfg.DataDir = t.TempDir()
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return Deps{Seeds: writeSeeds(t, cfg.DataDir, site.Seeds()), Identity: id, DialContext: site.DialContext, Logger: frontiertest.Logger(t)}
}

func crawlSite(t *testing.T, site *web.Site, cfg Config, opts web.ReachOptions) hostileRun {
	t.Helper()
	deps := siteDeps(t, site, &cfg)
	cpu0 := cputime.Process()
	sum, err := Run(t.Context(), cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	requireAccounted(t, cfg.DataDir)
	r := hostileRun{sum: sum, cpu: cputime.Process() - cpu0, traps: site.TrapFetches()}
	if r.check, err = site.CheckCrawlWith(opts, site.Seeds()...); err != nil {
		t.Fatal(err)
	}
	for u, n := range site.Fetches() {
		if !strings.HasSuffix(u, "/robots.txt") {
			r.fetched += n
		}
	}
	t.Logf("summary %+v; %d page requests, %.1f pages/s, %.2f CPU-s; reachable %d, coverage %.4f, missing %d, served twice %d, unserved %d, robots violations %d, trap fetches %v",
		sum, r.fetched, float64(sum.Pages)/sum.Elapsed.Seconds(), r.cpu.Seconds(), r.check.Reachable, r.check.Coverage(),
		len(r.check.Missing), len(r.check.Twice), len(r.check.Unserved), len(r.check.RobotsViolations), r.traps)
	if p50, p90, n := redirectLatency(site); n > 0 {
		t.Logf("redirect hop latency (target asked for after its redirect's answer): p50 %v, p90 %v over %d hops", p50, p90, n)
	}
	return r
}

func hostileCrawlConfig() Config {
	cfg := DefaultConfig()
	cfg.Spiders, cfg.StrategyWorkers = 2, 2
	cfg.Spider.Delay = 5 * time.Millisecond
	cfg.Spider.RequestTimeout = time.Second
	cfg.Spider.MaxBodyBytes = 1 << 20
	cfg.StopWhenDone, cfg.QuietPeriod = true, 500*time.Millisecond
	cfg.Pebble.Sync = false
	cfg.StatsInterval = time.Second
	return cfg
}

// TestBenchHostileWeb measures a crawl of a 12-host × 150-page web with redirects and transient failures (no
// traps, no robots rules: the same web main's code can crawl to the end), for BENCHMARKS.md. Set
// FRONTIER_BENCH_HOSTILE=1 to run it.
func TestBenchHostileWeb(t *testing.T) {
	if os.Getenv("FRONTIER_BENCH_HOSTILE") == "" {
		t.Skip("set FRONTIER_BENCH_HOSTILE=1 to run the hostile-web benchmark")
	}
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = 12, 150, true
	wcfg.Hostile = web.Hostile{Redirects: 0.2, Failing: 0.05}
	if os.Getenv("FRONTIER_BENCH_NOFAIL") != "" {
		wcfg.Hostile.Failing = 0
	}
	site := web.Start(t, wcfg)
	cfg := hostileCrawlConfig()
	if os.Getenv("FRONTIER_BENCH_NOHOSTBACKOFF") != "" {
		cfg.Spider.HostFailures = 0
	}
	crawlSite(t, site, cfg, web.ReachOptions{})
}

// TestCrawlHostileWeb crawls a web with redirects (sources found before and after their targets, same- and
// cross-host, chains and a loop), pages failing transiently (500, 502, 503 twice, 504, 429 with Retry-After),
// infinite URL spaces on every host (calendar, session ids, relative-link loop, ever deeper paths) and links
// out of the seeds' domains, and checks it at the site's servers: every reachable in-scope page fetched, none
// served twice, robots.txt obeyed, trap pages within the scope's limits, and the crawl ends by itself. Set
// FRONTIER_HOSTILE_FULL=1 for the 12-host × 150-page web of issue 9's acceptance, and
// FRONTIER_HOSTILE_DEFAULT_SCOPE=1 to keep the scope's default limits (longer).
func TestCrawlHostileWeb(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 6, 30
	if os.Getenv("FRONTIER_HOSTILE_FULL") != "" {
		wcfg.Hosts, wcfg.PagesPerHost = 12, 150
	}
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 100*time.Millisecond, 100*time.Millisecond, 2<<20
	wcfg.Seed = uint64(time.Now().UnixNano()) // a different discovery order every run; logged below
	wcfg.Hostile = web.Hostile{Redirects: 0.2, Failing: 0.1, Traps: true}
	t.Logf("web seed %d", wcfg.Seed)
	site := web.Start(t, wcfg)

	cfg := hostileCrawlConfig()
	sc := &cfg.StrategyWorker.Scope
	if os.Getenv("FRONTIER_HOSTILE_DEFAULT_SCOPE") == "" {
		sc.MaxQueryVariants = 20 // short; with the default (1,000) the traps give 3,000+ pages a host
	}
	r := crawlSite(t, site, cfg, web.ReachOptions{InScope: web.SeedDomains(site.Seeds()...)})
	c := r.check
	if c.Coverage() != 1 || len(c.Missing) > 0 {
		t.Errorf("coverage %.4f: missing %v", c.Coverage(), c.Missing)
	}
	if len(c.Twice) > 0 {
		t.Errorf("served twice: %v", c.Twice)
	}
	if len(c.Unserved) > 0 {
		t.Errorf("never answered 2xx (a transient failure not retried?): %v", c.Unserved)
	}
	if len(c.RobotsViolations) > 0 {
		t.Errorf("robots violations: %v", c.RobotsViolations)
	}
	// Per host: the calendar and the two shop paths get max_query_variants each, the relative loop
	// max_repeated_segments pages, the deep path max_path_segments - 1.
	limit := 3*sc.MaxQueryVariants + sc.MaxRepeatedSegments + sc.MaxPathSegments - 1
	for h, n := range r.traps {
		if n > limit {
			t.Errorf("%s: %d trap pages fetched, want <= %d", h, n, limit)
		}
	}
	if len(r.traps) == 0 {
		t.Error("no trap page fetched: the traps are not linked?")
	}
	if r.sum.Queued != 0 {
		t.Errorf("%d still queued", r.sum.Queued)
	}
}
