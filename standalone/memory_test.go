package standalone

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

// TestLargePagesMemory measures the peak RSS of a standalone crawl of a web where every host serves one large
// page (web.Timing.LargePage, FRONTIER_BENCH_LARGE_BYTES, default 15 MB) beside a few small ones, all at
// spider delay 0, so the large bodies are fetched at once: the case issue 21 saw take a crawl of 1,000 hosts to
// 6.7-10.6 GB. The figure is the test process's ru_maxrss (the loopback web streams its large pages from one
// shared chunk, so it adds little). FRONTIER_BENCH_NO_LARGE=1 leaves the large pages out (the floor);
// FRONTIER_BENCH_BUDGET sets spider.body_budget_bytes; FRONTIER_BENCH_BLOOM_EXPECTED sets
// standalone.pebble.bloom.expected (this test's default is pebblestore's 100 million, cmd/standalone's 10 million);
// FRONTIER_BENCH_MEMORY_LIMIT=BYTES sets standalone.memory_limit as cmd/standalone uses it (Pebble's cache
// and the body budget derived from it, the Go runtime's soft limit set to Config.Memory().GoLimit unless
// GOMEMLIMIT is set); FRONTIER_BENCH_HEAPPROFILE=FILE writes a heap profile taken at the peak of the heap in
// use. Run it alone in its process, for BENCHMARKS.md:
//
//	FRONTIER_BENCH_MEMORY=1 FRONTIER_BENCH_HOSTS=200 go test -count=1 -run TestLargePagesMemory -v ./standalone
func TestLargePagesMemory(t *testing.T) {
	if os.Getenv("FRONTIER_BENCH_MEMORY") == "" {
		t.Skip("set FRONTIER_BENCH_MEMORY=1 to measure the peak RSS of a crawl of large pages")
	}
	env := func(k string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
			return v
		}
		return def
	}
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = env("FRONTIER_BENCH_HOSTS", 200), 5, true
	wcfg.LargeBytes = int64(env("FRONTIER_BENCH_LARGE_BYTES", 15_000_000))
	wcfg.Timing.LargePage = os.Getenv("FRONTIER_BENCH_NO_LARGE") == ""
	site := web.Start(t, wcfg)
	cfg := hostileCrawlConfig()
	cfg.Spider.Delay = 0
	cfg.Spider.MaxBodyBytes = 8 << 20 // the default
	cfg.Spider.RequestTimeout = 2 * time.Minute
	if b := env("FRONTIER_BENCH_BUDGET", 0); b > 0 {
		cfg.Spider.BodyBudgetBytes = int64(b)
	}
	if n := env("FRONTIER_BENCH_BLOOM_EXPECTED", 0); n > 0 { // cmd/standalone's default is 10,000,000
		cfg.Pebble.Bloom.Expected = uint64(n)
	}
	if lim := env("FRONTIER_BENCH_MEMORY_LIMIT", 0); lim > 0 {
		cfg.MemoryLimit, cfg.Pebble.CacheBytes = int64(lim), 0
		if os.Getenv("FRONTIER_BENCH_BUDGET") == "" {
			cfg.Spider.BodyBudgetBytes = 0
		}
		if os.Getenv("GOMEMLIMIT") == "" {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(cfg.Memory().GoLimit))
		}
	}
	t.Logf("memory plan %+v", cfg.Memory())
	deps := siteDeps(t, site, &cfg)
	if path := os.Getenv("FRONTIER_BENCH_HEAPPROFILE"); path != "" {
		stop := peakHeapProfile(t, path)
		defer stop()
	}
	cpu0 := cputime.Process()
	sum, err := Run(t.Context(), cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	cpu := cputime.Process() - cpu0
	// Read the peak before the accounting check opens the store a second time.
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d hosts × one %d-byte page: %d pages in %v, %.1f CPU-s, peak RSS %d MB (GOMEMLIMIT=%q)",
		wcfg.Hosts, wcfg.LargeBytes, sum.Pages, sum.Elapsed.Round(time.Millisecond), cpu.Seconds(), ru.Maxrss/1024, os.Getenv("GOMEMLIMIT"))
	requireAccounted(t, cfg.DataDir)
	if check, err := site.CheckCrawl(site.Seeds()...); err != nil || !check.OK() {
		t.Errorf("crawl check: %v; missing %d, twice %d, unserved %d", err, len(check.Missing), len(check.Twice), len(check.Unserved))
	}
}

// peakHeapProfile writes a heap profile to path each time the heap in use reaches a new maximum (checked every
// 250 ms), so the file ends up describing the crawl's peak. It returns the function that stops it.
func peakHeapProfile(t *testing.T, path string) func() {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		var peak uint64
		for {
			select {
			case <-done:
				t.Logf("heap profile at the peak (%d MB in use) in %s", peak>>20, path)
				return
			case <-tick.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse <= peak {
				continue
			}
			peak = ms.HeapInuse
			f, err := os.Create(path)
			if err != nil {
				t.Error(err)
				return
			}
			_ = pprof.WriteHeapProfile(f)
			_ = f.Close()
		}
	}()
	return func() { close(done); <-stopped }
}
