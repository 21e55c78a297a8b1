package standalone

import (
	"bytes"
	"fmt"
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
	// The plan reaches the store and the DB worker, not only the memory line.
	mem := cfg.Memory()
	if got := frontiertest.Gauge(t, reg, "frontier_state_bloom_max_bytes"); got != float64(mem.StateBloom) || got == 0 {
		t.Errorf("the states' Bloom filter is capped at %v bytes, want the plan's %d", got, mem.StateBloom)
	}
	want := mem.LinksCache(cfg.DBWorker.LinksCache)
	if got := frontiertest.Gauge(t, reg, "frontier_dbworker_links_cache_entries_max"); got != float64(want) || want >= cfg.DBWorker.LinksCache {
		t.Errorf("the DB worker's links cache holds %v, want the plan's %d, below the setting %d", got, want, cfg.DBWorker.LinksCache)
	}
	ev := frontiertest.Counter(t, reg, "frontier_strategyworker_state_cache_evictions_total")
	t.Logf("strategy worker 0: %v state cache evictions, %v misses", ev, frontiertest.Counter(t, reg, "frontier_strategyworker_state_cache_misses_total"))
	if ev < 100 {
		t.Errorf("strategy worker 0 evicted %v state cache entries: the cache did not overflow as the test means it to", ev)
	}
}

// TestCacheLoweredIsLogged: a state cache's max_entries or the links cache set above what the memory limit
// gives it is lowered with a warning that names the key and both figures; the default's lowering is only in
// the memory line, which gives the value the worker gets.
func TestCacheLoweredIsLogged(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config)
		warn string // the warning's start; "" for none
		line string // in the logs: the warning's figures, or the memory line's value
	}{
		{name: "state cache set above the share", set: func(c *Config) { c.StrategyWorker.Cache.MaxEntries = 5_000_000 },
			warn: `level=WARN msg="strategy_worker.state_cache.max_entries lowered`, line: "max_entries=5000000 lowered_to="},
		{name: "defaults", set: func(*Config) {}},
		{name: "state cache set below the share", set: func(c *Config) { c.StrategyWorker.Cache = state.CacheConfig{MaxEntries: 1000, FlushEvery: 100} },
			line: "state_cache_entries=1000 "},
		{name: "links cache set above the share", set: func(c *Config) { c.DBWorker.LinksCache = 2_000_000 },
			warn: `level=WARN msg="db_worker.links_cache lowered`, line: "links_cache=2000000 lowered_to="},
		{name: "links cache set below the share", set: func(c *Config) { c.DBWorker.LinksCache = 1000 }, line: "links_cache=1000 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			cfg.MemoryLimit, cfg.Pebble.CacheBytes = 64<<20, 0
			tc.set(&cfg)
			// No seeds and no crawl to resume: Run refuses after sizing its memory.
			_, err := Run(t.Context(), cfg, Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err == nil || !strings.Contains(err.Error(), "holds no crawl to resume") {
				t.Fatalf("Run without seeds or a crawl to resume: %v, want it refused for that", err)
			}
			warned := strings.Contains(logs.String(), "level=WARN")
			if want := tc.warn != ""; warned != want || !strings.Contains(logs.String(), tc.warn) {
				t.Errorf("warned %v, want %q; logs:\n%s", warned, tc.warn, logs.String())
			}
			mem := cfg.Memory()
			for _, line := range []string{tc.line,
				fmt.Sprintf("state_cache_entries=%d ", mem.StateCacheConfig(cfg.StrategyWorker.Cache, cfg.StrategyWorkers).MaxEntries),
				fmt.Sprintf("links_cache=%d ", mem.LinksCache(cfg.DBWorker.LinksCache)),
				fmt.Sprintf("state_bloom_max_mib=%d ", mem.StateBloom>>20)} {
				if !strings.Contains(logs.String(), line) {
					t.Errorf("the logs do not say %q:\n%s", line, logs.String())
				}
			}
		})
	}
}
