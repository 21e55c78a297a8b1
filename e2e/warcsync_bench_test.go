//go:build integration

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// TestWARCSyncCost measures what archiving costs a standalone crawl: each binary named in FRONTIER_BENCH_WARC
// (comma-separated paths of cmd/standalone builds, e.g. before and after a change) crawls the same loopback web
// of 50 × 100 pages with delay 0 and warc.dir set, three rounds alternating, and the pages/s of each run are
// logged (BENCHMARKS.md, "Spider and WARC"). Skipped unless FRONTIER_BENCH_WARC is set; it asserts nothing
// about time.
func TestWARCSyncCost(t *testing.T) {
	bins := strings.Split(os.Getenv("FRONTIER_BENCH_WARC"), ",")
	if bins[0] == "" {
		t.Skip("FRONTIER_BENCH_WARC is not set")
	}
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 50, 100
	wcfg.Plain, wcfg.UseIPs = true, true
	site := web.Start(t, wcfg)
	re := regexp.MustCompile(`crawl finished in (\S+)\n\s+pages fetched\s+(\d+)`)
	for round := range 3 {
		for _, bin := range bins {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "seeds.txt"), []byte(strings.Join(site.Seeds(), "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := startCrawl(t, bin, dir, "--seeds", "seeds.txt", "--set", "metrics.addr=", "--set", "spider.delay=0s",
				"--set", "standalone.quiet_period=300ms", "--set", "warc.dir="+filepath.Join(dir, "warc"))
			select {
			case <-p.Done():
				if err := p.Err(); err != nil {
					t.Fatalf("%s: %v\n%s", bin, err, tail(p.Log(), 20))
				}
			case <-time.After(5 * time.Minute):
				t.Fatalf("%s did not finish in 5 minutes", bin)
			}
			requireAccounted(t, filepath.Join(dir, "data", "standalone"))
			m := re.FindStringSubmatch(p.Log())
			if m == nil {
				t.Fatalf("%s: no summary in its output:\n%s", bin, tail(p.Log(), 20))
			}
			d, _ := time.ParseDuration(m[1])
			n, _ := strconv.ParseFloat(m[2], 64)
			t.Logf("round %d %s: %s pages in %v = %.0f pages/s", round, filepath.Base(bin), m[2], d, n/d.Seconds())
		}
	}
}
