package standalone

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/state"
)

// TestCrawlTinyStateCache crawls a web with redirects and pages that fail once, under a memory limit, with
// state caches far smaller than the URLs the crawl discovers (50 entries a strategy worker, where the web has
// hundreds of URLs and each page links to many), so that nearly every URL-seen test of the crawl's hot path
// evicts an entry and reads the state back from Pebble: every reachable page is still fetched exactly once,
// every failure retried, and every URL scheduled accounted for at the end.
func TestCrawlTinyStateCache(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = 6, 40, true
	wcfg.CrawlDelay = 20 * time.Millisecond
	wcfg.Seed = uint64(time.Now().UnixNano()) // a different discovery order every run; logged below
	wcfg.Hostile = web.Hostile{Redirects: 0.2, Failing: 0.1}
	t.Logf("web seed %d", wcfg.Seed)
	site := web.Start(t, wcfg)

	cfg := hostileCrawlConfig()
	// The memory plan's path: a state cache bound it leaves as it is, the page bounds it sets.
	cfg.MemoryLimit, cfg.Pebble.CacheBytes = 64<<20, 0
	cfg.StrategyWorker.Cache = state.CacheConfig{MaxEntries: 50, FlushEvery: 10}
	reg := prometheus.NewRegistry()
	deps := siteDeps(t, site, &cfg)
	deps.Registerer = reg
	sum, err := Run(t.Context(), cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	acc := requireAccounted(t, cfg.DataDir)
	c, err := site.CheckCrawlWith(web.ReachOptions{}, site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary %+v; accounting %+v; reachable %d", sum, acc, c.Reachable)
	if !c.OK() || c.Coverage() != 1 {
		t.Errorf("coverage %.4f: missing %v, fetched twice %v, robots violations %v", c.Coverage(), c.Missing, c.Twice, c.RobotsViolations)
	}
	if len(c.Unserved) > 0 {
		t.Errorf("never answered 2xx (a transient failure not retried?): %v", c.Unserved)
	}
	ev := frontiertest.Counter(t, reg, "frontier_strategyworker_state_cache_evictions_total")
	t.Logf("strategy worker 0: %v state cache evictions, %v misses", ev, frontiertest.Counter(t, reg, "frontier_strategyworker_state_cache_misses_total"))
	if ev < 100 {
		t.Errorf("strategy worker 0 evicted %v state cache entries: the cache did not overflow as the test means it to", ev)
	}
}

// TestStateCacheLoweredIsLogged: a max_entries set above what the memory limit gives the state caches is
// lowered with a warning that names the key and both figures; the default's lowering is only in the memory
// line.
func TestStateCacheLoweredIsLogged(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxEntries int
		warn       bool
	}{
		{name: "set above the share", maxEntries: 5_000_000, warn: true},
		{name: "the default", maxEntries: state.DefaultCacheConfig().MaxEntries},
		{name: "set below the share", maxEntries: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			cfg.MemoryLimit, cfg.Pebble.CacheBytes = 64<<20, 0
			cfg.StrategyWorker.Cache.MaxEntries = tc.maxEntries
			// No seeds and no crawl to resume: Run refuses after sizing its memory.
			_, err := Run(t.Context(), cfg, Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err == nil {
				t.Fatal("Run without seeds or a crawl to resume: no error")
			}
			warned := strings.Contains(logs.String(), "level=WARN msg=\"strategy_worker.state_cache.max_entries lowered")
			if warned != tc.warn {
				t.Errorf("warned %v, want %v; logs:\n%s", warned, tc.warn, logs.String())
			}
			if tc.warn && !strings.Contains(logs.String(), "max_entries=5000000 lowered_to=") {
				t.Errorf("the warning does not name both figures:\n%s", logs.String())
			}
		})
	}
}
