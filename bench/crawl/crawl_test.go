package crawl

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier/configs"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/standalone"
	_ "github.com/frontiercrawl/frontier/strategy/all"
)

var (
	flagWeb     = flag.String("crawl.web", "20x30", "HOSTSxPAGES of the loopback web (the recorded run: 200x300)")
	flagSim     = flag.String("crawl.sim", "200x50", "HOSTSxPAGES of the simulated web (the recorded run: 10000x100)")
	flagLinks   = flag.Int("crawl.links", 10, "links per simulated page")
	flagLatency = flag.Duration("crawl.latency", 0, "simulated latency of one fetch")
	flagSpiders = flag.Int("crawl.spiders", 0, "spiders (and strategy workers) of the standalone crawl; 0: the configuration's default")
	flagTimeout = flag.Duration("crawl.timeout", 10*time.Minute, "longest a crawl may take")
	flagBatch   = flag.Int("crawl.batch", 0, "batch_size of the strategy and DB workers (0: the default)")
	flagHeapAt  = flag.Duration("crawl.heapat", 0, "write a heap profile (in use) this long into the crawl, to -crawl.heapprofile")
	flagHeapOut = flag.String("crawl.heapprofile", "heap.prof", "where -crawl.heapat writes")
)

// heapAt writes a heap profile d into the crawl (the end-of-test -memprofile sees only what survived it).
func heapAt(t *testing.T, d time.Duration) (stop func()) {
	if d <= 0 {
		return func() {}
	}
	tm := time.AfterFunc(d, func() {
		f, err := os.Create(*flagHeapOut)
		if err != nil {
			t.Log(err)
			return
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			t.Log(err)
		}
	})
	return func() { tm.Stop() }
}

// standaloneConfig is the standalone mode as cmd/standalone builds it from the default configuration, with
// delay 0 (the loopback web is ours), the data in dir, and the crawl stopping once done.
func standaloneConfig(t *testing.T, dir string) (standalone.Config, standalone.Identity) {
	t.Helper()
	e, id, err := standaloneConfigFor(dir, *flagSpiders, *flagBatch)
	if err != nil {
		t.Fatal(err)
	}
	return e, id
}

// standaloneConfigFor is standaloneConfig with the spiders and batch size given (0: the defaults), for a child
// process that has no testing.T.
func standaloneConfigFor(dir string, spiders, batch int) (standalone.Config, standalone.Identity, error) {
	cfg := configs.DefaultConfig()
	e := standalone.DefaultConfig()
	e.DataDir = dir
	e.Spiders, e.StrategyWorkers = cfg.Standalone.Spiders, cfg.Standalone.StrategyWorkers
	if spiders > 0 {
		e.Spiders, e.StrategyWorkers = spiders, spiders
	}
	e.StopWhenDone, e.QuietPeriod = true, benchQuietPeriod
	e.Codec = cfg.Codec
	e.Spider, e.StrategyWorker, e.DBWorker = cfg.Spider, cfg.StrategyWorker, cfg.DBWorker
	e.Spider.Delay = 0
	if batch > 0 {
		e.StrategyWorker.BatchSize, e.DBWorker.BatchSize = batch, batch
	}
	e.StatsInterval = 10 * time.Second
	e.Pebble = cfg.Standalone.Pebble
	e.MemoryLimit = cfg.Standalone.MemoryLimit // Pebble's cache and the body budget are derived from it
	id, err := cfg.Identity.New()
	return e, id, err
}

// benchQuietPeriod is the standalone's quiet period in the benchmarks' crawls (standalone.Config.QuietPeriod):
// the rates count up to the last response, not the quiet period after it.
const benchQuietPeriod = time.Second

// lastPage records when the last response was handled, so the rate is not diluted by the quiet period
// that ends the crawl.
type lastPage struct {
	n    atomic.Int64
	last atomic.Int64 // unix nanos
}

// IgnoresBody: it reads no body, like cmd/standalone without a WARC archive (no handler), so large bodies
// are parsed as they stream in (spider.BodyIgnorer).
func (l *lastPage) IgnoresBody() bool { return true }

func (l *lastPage) HandleResponse(context.Context, *spider.Fetched) error {
	l.n.Add(1)
	l.last.Store(time.Now().UnixNano())
	return nil
}

// runStandalone crawls from seeds and returns the summary, the registry and the time to the last page.
func runStandalone(t *testing.T, cfg standalone.Config, deps standalone.Deps) (standalone.Summary, *prometheus.Registry, time.Duration) {
	t.Helper()
	reg := prometheus.NewRegistry()
	lp := &lastPage{}
	deps.Handler, deps.Registerer = lp, reg
	ctx, cancel := context.WithTimeout(t.Context(), *flagTimeout)
	defer cancel()
	start := time.Now()
	defer heapAt(t, *flagHeapAt)()
	sum, err := standalone.Run(ctx, cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the crawl did not finish in %v", *flagTimeout)
	}
	wall := time.Duration(lp.last.Load() - start.UnixNano())
	if lp.n.Load() == 0 {
		wall = sum.Elapsed
	}
	return sum, reg, wall
}

// TestStandaloneHTTP crawls the loopback web with the standalone mode's default configuration (delay 0, one
// connection per host) and reports unique pages/s, CPU-seconds per 1,000 pages and the peak RSS of the
// crawling process, beside coverage and duplicates from the servers' own log.
func TestStandaloneHTTP(t *testing.T) {
	hosts, pages, err := parseSize(*flagWeb)
	if err != nil {
		t.Fatal(err)
	}
	w := startWeb(t, hosts, pages)
	dir := t.TempDir()
	cfg, id := standaloneConfig(t, filepath.Join(dir, "data"))
	m := startMeter()
	sum, reg, wall := runStandalone(t, cfg, standalone.Deps{Seeds: writeSeeds(t, w.Seeds), Identity: id})
	cpu := m.done()
	frontiertest.RequireStandaloneAccounted(t, cfg.DataDir) // after the meter stopped: not in the figures
	c := w.check(t)
	unique := int64(c.Reachable - c.Missing)
	n, q := histogram(t, reg, "frontier_spider_discovery_to_fetch_seconds", 0.5, 0.9, 0.99)
	reportMem(t, m, "standalone HTTP "+*flagWeb, unique, wall, cpu, m.peakRSS.Load(), m.load,
		"reachable", c.Reachable, "missing", c.Missing, "fetched twice", c.Twice, "page_crawled", sum.Pages,
		"request errors", sum.Errors, "spiders", cfg.Spiders, "discovery-to-fetch samples", int64(n),
		"p50/p90/p99 s", fmtQ(q), "web server CPU", c.CPU)
	if c.Missing != 0 || c.Twice != 0 {
		t.Errorf("coverage: %d of %d reachable pages missing, %d fetched twice", c.Missing, c.Reachable, c.Twice)
	}
}

func fmtQ(q []float64) string {
	s := ""
	for i, v := range q {
		if i > 0 {
			s += "/"
		}
		s += time.Duration(v * float64(time.Second)).Round(time.Millisecond).String()
	}
	return s
}
