package launch

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/frontiercrawl/frontier/configs"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/internal/cli"
	"github.com/frontiercrawl/frontier/spider/archive"
	"github.com/frontiercrawl/frontier/standalone"
	"github.com/frontiercrawl/frontier/warc"
)

// runStandalone is the standalone role (see the package doc of cmd/standalone).
func runStandalone(ctx context.Context, env cli.Env) error {
	if env.URLFrontier != "" {
		return serveURLFrontier(ctx, env, runStandalone)
	}
	cfg := env.Config
	if err := checkStrategy(cfg); err != nil {
		return err
	}
	ecfg := standaloneConfig(cfg)
	setRuntime(ecfg.Memory(), env)
	id, err := cfg.Identity.New()
	if err != nil {
		return err
	}
	deps := standalone.Deps{Seeds: env.Seeds, Identity: id, Logger: env.Logger, Registerer: env.Registry}

	var site *web.Site
	if env.Demo {
		if site, err = startDemo(&ecfg, &deps, cfg); err != nil {
			return err
		}
		defer site.Stop()
	}
	pl := newProgressLine(os.Stderr, ecfg.StatsInterval)
	deps.Progress = pl.update
	var wr *warc.Writer
	if cfg.WARC.Dir != "" {
		if wr, err = warc.New(cfg.WARC, env.Logger.With("component", "warc")); err != nil {
			return err
		}
		deps.Handler = &archive.Handler{W: wr}
	}

	sum, err := standalone.Run(ctx, ecfg, deps)
	pl.end()
	if wr != nil {
		if cerr := wr.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	return report(os.Stdout, sum, site, cfg.WARC.Dir)
}

// setRuntime applies the Go part of standalone.memory_limit (standalone.Config.Memory: the limit minus Pebble's
// cache, which the Go runtime does not see) as the process's soft memory limit, with the collector target that
// goes with it (standalone.MemoryPlan.SetRuntime), unless GOMEMLIMIT or GOGC is set (the operator's word wins)
// or the limit is 0.
func setRuntime(plan standalone.MemoryPlan, env cli.Env) {
	if set := plan.SetRuntime(os.Getenv); len(set) > 0 {
		env.Logger.Info("standalone: the environment sets the Go runtime's limits; standalone.memory_limit and its GOGC not applied",
			"env", strings.Join(set, " "), "memory_limit", plan.Total)
	}
}

// standaloneConfig is the standalone section, which configs filled from the other sections (FillGlobals).
func standaloneConfig(cfg *configs.Config) standalone.Config { return cfg.Standalone }

// The demo site: every feature of the synthetic web (robots.txt rules and failures, redirects, errors, URL
// variants, a hanging host, a 20 MB page), small enough to crawl politely in well under a minute.
func startDemo(ecfg *standalone.Config, deps *standalone.Deps, cfg *configs.Config) (*web.Site, error) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 10, 30
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 300*time.Millisecond, 300*time.Millisecond, 20<<20
	site, err := web.New(wcfg)
	if err != nil {
		return nil, err
	}
	// A fresh crawl every time: the demo's data lives under its own directory, wiped at start.
	dir := ecfg.DataDir + "-demo"
	if err := os.RemoveAll(dir); err != nil {
		site.Stop()
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		site.Stop()
		return nil, err
	}
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("# the demo site's home pages\n"+strings.Join(site.Seeds(), "\n")+"\n"), 0o644); err != nil {
		site.Stop()
		return nil, err
	}
	ecfg.DataDir = dir
	ecfg.StopWhenDone = true
	ecfg.Spider.Delay = 100 * time.Millisecond
	ecfg.Spider.RequestTimeout = 3 * time.Second
	ecfg.StatsInterval = 5 * time.Second
	if cfg.WARC.Dir == "" {
		cfg.WARC.Dir = filepath.Join(dir, "warc")
	}
	deps.Seeds = seeds
	deps.DialContext = site.DialContext
	return site, nil
}

// report prints what the crawl did and, for the demo, how it compares with the site's ground truth as the
// site's own servers recorded it. For the demo it returns an error when the crawl fails that check, so the
// process exits non-zero (e2e TestDemo runs it in the test command).
func report(w io.Writer, sum standalone.Summary, site *web.Site, warcDir string) error {
	fmt.Fprintf(w, "\ncrawl finished in %s\n", sum.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "  pages fetched      %d (%.0f pages/min)\n", sum.Pages, float64(sum.Pages)/sum.Elapsed.Minutes())
	fmt.Fprintf(w, "  request errors     %d (robots-disallowed, DNS, refused, timeouts, ...)\n", sum.Errors)
	fmt.Fprintf(w, "  links extracted    %d\n", sum.Links)
	fmt.Fprintf(w, "  still queued       %d\n", sum.Queued)
	if warcDir != "" {
		files, _ := filepath.Glob(filepath.Join(warcDir, "*.warc.gz"))
		var size int64
		for _, f := range files {
			if st, err := os.Stat(f); err == nil {
				size += st.Size()
			}
		}
		fmt.Fprintf(w, "  WARC               %d file(s), %.1f MB in %s\n", len(files), float64(size)/1e6, warcDir)
	}
	if site == nil {
		return nil
	}
	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		fmt.Fprintf(w, "  ground truth: %v\n", err)
		return fmt.Errorf("demo: ground truth unavailable: %w", err)
	}
	fmt.Fprintf(w, "\nchecked against the demo site's ground truth (its servers' own request logs):\n")
	fmt.Fprintf(w, "  reachable URLs     %d, fetched %d, missing %d\n", check.Reachable, check.Reachable-len(check.Missing), len(check.Missing))
	fmt.Fprintf(w, "  fetched twice      %d\n", len(check.Twice))
	fmt.Fprintf(w, "  robots violations  %d\n", len(check.RobotsViolations))
	if len(check.Unserved) > 0 {
		fmt.Fprintf(w, "  never answered 2xx %d\n", len(check.Unserved))
	}
	return demoVerdict(check)
}

// demoVerdict is the demo's pass/fail: every reachable URL fetched, none twice, robots.txt obeyed, every page
// answered (web.CrawlCheck.OK). The error names what failed and the first URLs of each kind.
func demoVerdict(c web.CrawlCheck) error {
	if c.OK() {
		return nil
	}
	var twice []string
	for u, n := range c.Twice {
		twice = append(twice, fmt.Sprintf("%s ×%d", u, n))
	}
	slices.Sort(twice)
	var parts []string
	for _, p := range []struct {
		what string
		urls []string
	}{{"missing", c.Missing}, {"fetched twice", twice}, {"robots violations", c.RobotsViolations}, {"never answered 2xx", c.Unserved}} {
		if len(p.urls) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", len(p.urls), p.what, strings.Join(p.urls[:min(3, len(p.urls))], ", ")))
		}
	}
	return fmt.Errorf("demo: the crawl failed the ground-truth check: %s", strings.Join(parts, "; "))
}
