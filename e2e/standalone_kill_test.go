//go:build integration

package e2e

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/pebblebus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/pebblestore"
)

// buildStandalone builds cmd/standalone into a temporary directory, as `go install` would.
func buildStandalone(t *testing.T) string {
	t.Helper()
	return filepath.Join(cluster.Build(t, t.Context(), "./cmd/standalone"), "standalone")
}

// startCrawl starts the binary in dir (an otherwise empty directory: it runs on its built-in configuration,
// none of the test's FRONTIER_* variables), watched by a supervisor of its own (cluster.Procs) that stops it
// at the test's end.
func startCrawl(t *testing.T, bin, dir string, args ...string) *cluster.Proc {
	t.Helper()
	return cluster.NewProcs(t, "").Start(filepath.Base(bin), cluster.Cmd{Path: bin, Args: args, Dir: dir, CleanEnv: true})
}

// siteRequests counts the page requests the site has received (robots.txt excluded).
func siteRequests(site *web.Site) int {
	n := 0
	for _, h := range site.Hosts() {
		n += h.RequestCount()
	}
	return n
}

// killSite starts the web the kill tests crawl: hosts plain hosts of 60 pages, each on an address of its own,
// where a tenth of the pages fail before answering: their retries go through the queue while the crawl is
// interrupted, and every one must still be fetched (issue 21: a retry dropped as a duplicate was never fetched).
func killSite(t *testing.T, hosts int) *web.Site {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = hosts, 60
	wcfg.Plain, wcfg.UseIPs = true, true
	wcfg.Hostile.Failing = 0.1
	return web.Start(t, wcfg)
}

// killArgs are the settings TestStandaloneKillResume and TestStandaloneKillWARC crawl killSite with.
var killArgs = []string{"--set", "spider.delay=20ms", "--set", "standalone.quiet_period=300ms", "--set", "shutdown_timeout=20s"}

// reachablePages is the number of pages a crawl of site from its seeds gets an answer for (pages, HTTP errors,
// redirects, large pages): what crawlWithKills counts the kills' fractions of.
func reachablePages(t *testing.T, site *web.Site) int {
	t.Helper()
	want, err := site.Reachable(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	return len(want.URLs(web.OK, web.HTTPError, web.Redirect, web.Large))
}

// killPlan is one interruption: the signal, sent once the site has answered frac of the reachable pages.
type killPlan struct {
	sig   syscall.Signal
	frac  float64
	after time.Duration // instead of frac: this long after the run started
	// jitter, when set, is how long the signal waits once frac is reached (a target the crawl passed in an
	// earlier run is reached at once: the signal then falls in the start of the run, recovery included).
	jitter time.Duration
}

// killResult is what one interrupted run left: when the signal went, and the fetches in flight then: pages
// the site was asked for whose outcome the crawler had not reported durably.
type killResult struct {
	plan     killPlan
	at       time.Time
	inFlight map[string]bool
	exit     string
}

// crawlWithKills crawls site with the standalone binary, interrupting it as plans says and starting the
// same command again after each interruption, until a run ends by itself. It returns what each kill left.
func crawlWithKills(t *testing.T, bin string, site *web.Site, reachable int, extra []string, plans []killPlan) []killResult {
	t.Helper()
	dir := t.TempDir()
	seeds := strings.Join(site.Seeds(), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "seeds.txt"), []byte(seeds), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--seeds", "seeds.txt", "--set", "metrics.addr="}, extra...)
	var results []killResult
	for i := 0; ; i++ {
		p := startCrawl(t, bin, dir, args...)
		if i >= len(plans) {
			select {
			case <-p.Done():
				if err := p.Err(); err != nil {
					t.Fatalf("final run: %v\n%s", err, tail(p.Log(), 40))
				}
			case <-time.After(3 * time.Minute):
				t.Fatalf("final run did not finish\n%s", tail(p.Log(), 40))
			}
			t.Logf("final run:\n%s", grepLines(p.Log(), "resuming", "new crawl", "pages fetched", "still queued"))
			requireAccounted(t, filepath.Join(dir, "data", "standalone"))
			return results
		}
		plan := plans[i]
		target := max(1, int(plan.frac*float64(reachable)))
		deadline := time.Now().Add(plan.after)
		for plan.after > 0 && time.Now().Before(deadline) || plan.after == 0 && siteRequests(site) < target {
			select {
			case <-p.Done():
				t.Fatalf("run %d ended before its kill (%v):\n%s", i, p.Err(), tail(p.Log(), 40))
			case <-time.After(2 * time.Millisecond):
			}
		}
		if plan.jitter > 0 {
			select {
			case <-p.Done():
				t.Fatalf("run %d ended before its kill (%v):\n%s", i, p.Err(), tail(p.Log(), 40))
			case <-time.After(plan.jitter):
			}
		}
		at := time.Now()
		if err := p.Signal(plan.sig); err != nil {
			t.Fatal(err)
		}
		var exit string
		var drained time.Duration
		select {
		case <-p.Done():
			drained = time.Since(at)
			exit = "exit 0"
			if err := p.Err(); err != nil {
				exit = err.Error()
			}
		case <-time.After(time.Minute):
			t.Fatalf("run %d did not exit within a minute of %v\n%s", i, plan.sig, tail(p.Log(), 40))
		}
		if plan.sig == syscall.SIGTERM && exit != "exit 0" {
			t.Errorf("run %d: SIGTERM ended it with %s, want a clean exit\n%s", i, exit, tail(p.Log(), 20))
		}
		// In flight at the kill: taken from the feed and requested from the site, but not reported durably.
		r := killResult{plan: plan, at: at, inFlight: map[string]bool{}, exit: exit}
		open := unreported(t, filepath.Join(dir, "data", "standalone"), 2)
		for _, h := range site.Hosts() {
			for _, req := range h.Requests() {
				if u := h.Origin + req.Target; req.Target != "/robots.txt" && open[u] {
					r.inFlight[u] = true
				}
			}
		}
		t.Logf("run %d: %v at %d page requests (%.0f%%), %d in flight, %s %v after the signal; %s", i, plan.sig, siteRequests(site),
			100*plan.frac, len(r.inFlight), exit, drained.Round(time.Millisecond), grepLines(p.Log(), "resuming", "new crawl"))
		results = append(results, r)
	}
}

func tail(s string, n int) string { return cluster.Tail(s, n) }

func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, strings.TrimSpace(l))
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// TestStandaloneKillResume is the standalone crawl's stop-and-resume promise, checked from outside: the
// binary (built here as `go install` builds it, run in an empty directory) crawls a multi-host web served by
// this test process, so the site's request log survives the crawler's deaths, and is interrupted seven
// times during one crawl, by SIGTERM and by SIGKILL, from its first request to its last fifth, resumed each
// time with the same command. The pages fetched must be exactly the ground truth's (what an uninterrupted
// crawl fetches: TestCrawlSyntheticWeb in package standalone), and every page fetched twice must have been in
// flight at a kill: requested from the site, with its URL still held uncommitted by some stage (read after
// each death from the crawl's own data directory, see unreported); so the pages fetched twice are at most the
// fetches in flight at the kills.
func TestStandaloneKillResume(t *testing.T) {
	bin := buildStandalone(t)
	site := killSite(t, 12)
	reachable := reachablePages(t, site)
	plans := []killPlan{
		{sig: syscall.SIGKILL, frac: 0}, // at the first request
		{sig: syscall.SIGTERM, frac: 0.08},
		{sig: syscall.SIGKILL, frac: 0.2},
		{sig: syscall.SIGTERM, frac: 0.35},
		{sig: syscall.SIGKILL, frac: 0.5},
		{sig: syscall.SIGKILL, frac: 0.62},
		{sig: syscall.SIGTERM, frac: 0.8},
	}
	results := crawlWithKills(t, bin, site, reachable, killArgs, plans)

	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Missing) > 0 || len(check.Unserved) > 0 {
		t.Errorf("after %d interruptions, %d of %d reachable pages never fetched: %v (unserved %v)", len(plans),
			len(check.Missing), check.Reachable, first(check.Missing, 10), first(check.Unserved, 10))
	}
	inFlight := map[string]bool{}
	total := 0
	for _, r := range results {
		total += len(r.inFlight)
		for u := range r.inFlight {
			inFlight[u] = true
		}
	}
	// Which interruption each page fetched twice straddles.
	perKill := make([]int, len(results))
	for _, h := range site.Hosts() {
		starts := map[string][]time.Time{}
		for _, req := range h.Requests() {
			starts[h.Origin+req.Target] = append(starts[h.Origin+req.Target], req.Start)
		}
		for u, ss := range starts {
			if check.Twice[u] == 0 || len(ss) < 2 {
				continue
			}
			for i := len(results) - 1; i >= 0; i-- {
				if !ss[1].Before(results[i].at) {
					perKill[i]++ // the second fetch follows kill i: the first was in flight then, or before
					break
				}
			}
		}
	}
	for i, r := range results {
		t.Logf("kill %d (%v at %.0f%%): %d in flight at the site, %d pages fetched again after it", i, r.plan.sig, 100*r.plan.frac, len(r.inFlight), perKill[i])
	}
	var outside []string
	for u, n := range check.Twice {
		if !inFlight[u] {
			outside = append(outside, fmt.Sprintf("%s ×%d", u, n))
		}
	}
	t.Logf("%d reachable pages, all fetched: %v; fetched twice %d, in flight at the %d kills %d", check.Reachable,
		len(check.Missing) == 0, len(check.Twice), len(plans), total)
	if len(check.Twice) > total {
		t.Errorf("%d pages fetched twice, more than the %d in flight at the kills", len(check.Twice), total)
	}
	if len(outside) > 0 {
		t.Errorf("%d pages fetched twice were not in flight at any kill: %v", len(outside), first(outside, 10))
	}
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// requireAccounted checks the end-of-crawl invariant on the data directory of a standalone crawl that ended:
// every URL scheduled is crawled, in an error state with its reason, or still queued
// (frontiertest.CheckAccounting).
func requireAccounted(t *testing.T, dataDir string) {
	t.Helper()
	frontiertest.RequireStandaloneAccounted(t, dataDir)
}

// unreported reads, from the data directory of a stopped crawl, the URLs it may hand to a spider again, i.e.
// what was in flight in some stage: the feed messages after each spider's committed offset that its journal
// does not list as reported, the URLs of the spider-log and scoring-log messages not yet committed by the
// strategy workers and the DB worker, and the queue's rows. A page fetched again after the crawl resumes must
// be one of these, and have been requested from the site before.
func unreported(t *testing.T, dataDir string, spiders int) map[string]bool {
	t.Helper()
	db, err := pebble.Open(filepath.Join(dataDir, "pebble"), &pebble.Options{Logger: pebblestore.Logger(nil)})
	if err != nil {
		t.Fatalf("open the stopped crawl's store: %v", err)
	}
	defer db.Close()
	cfg := pebblebus.DefaultConfig()
	cfg.Partitions = map[bus.Stream]int{bus.SpiderLog: 2, bus.ScoringLog: 1, bus.SpiderFeed: spiders}
	cfg.Sync = false
	b, err := pebblebus.Open(db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, _ := codec.New("msgpack")
	lags, err := b.Lag(t.Context(), bus.SpiderFeed, bus.GroupSpiderFeed)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for p := range spiders {
		reported := map[int64]bool{}
		if j, err := os.ReadFile(filepath.Join(dataDir, fmt.Sprintf("spider-%d", p), fmt.Sprintf("spider-feed-%d.journal", p))); err == nil {
			for i, line := range strings.Split(string(j), "\n") {
				var o int64
				if _, err := fmt.Sscan(line, &o); i > 0 && err == nil {
					reported[o] = true
				}
			}
		}
		if lags[p] == 0 {
			continue
		}
		cons, err := b.Consumer(t.Context(), bus.SpiderFeed, bus.GroupSpiderFeed, []int{p})
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := cons.Fetch(t.Context(), int(lags[p]))
		_ = cons.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if reported[m.Offset] {
				continue
			}
			r, err := c.DecodeRequest(m.Value)
			if err != nil {
				t.Fatalf("feed partition %d offset %d: %v", p, m.Offset, err)
			}
			out[r.URL] = true
		}
	}
	// What the strategy workers and the DB worker had read and not committed: a replayed add_seeds or
	// links_extracted schedules its URLs again when the states it had changed were not yet written.
	for _, sg := range []struct {
		s bus.Stream
		g string
	}{{bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog}, {bus.ScoringLog, bus.GroupDBWorkerScoringLog}} {
		lags, err := b.Lag(t.Context(), sg.s, sg.g)
		if err != nil {
			t.Fatal(err)
		}
		for p, n := range lags {
			if n == 0 {
				continue
			}
			cons, err := b.Consumer(t.Context(), sg.s, sg.g, []int{p})
			if err != nil {
				t.Fatal(err)
			}
			msgs, err := cons.Fetch(t.Context(), int(n))
			_ = cons.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				msg, err := c.DecodeMessage(m.Value)
				if err != nil {
					t.Fatalf("%s partition %d offset %d: %v", sg.s, p, m.Offset, err)
				}
				switch msg := msg.(type) {
				case *frontier.AddSeeds:
					for _, r := range msg.Seeds {
						out[r.URL] = true
					}
				case *frontier.LinksExtracted:
					for _, r := range msg.Links {
						out[r.URL] = true
					}
				case *frontier.UpdateScore:
					out[msg.Request.URL] = true
				}
			}
		}
	}
	// The queue's rows: a row whose batch was put on the feed stays until the DB worker acknowledges the
	// batch, so after a kill between the two the batch is sent again. Such a row is the DB worker's request
	// in flight.
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{'q'}, UpperBound: []byte{'x'}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		if (k[0] != 'q' && k[0] != 'w') || len(v) < 17 {
			continue
		}
		n, w := binary.Uvarint(v[16:])
		if w <= 0 || n > uint64(len(v)-16-w) {
			t.Fatalf("queue row %x: malformed value", k)
		}
		r, err := c.DecodeRequest(v[16+w+int(n):])
		if err != nil {
			t.Fatalf("queue row %x: %v", k, err)
		}
		out[r.URL] = true
	}
	return out
}

// TestReliabilityTable measures docs/reliability.md's table: a 40-host × 200-page loopback web, spider delay 0,
// crawled by the standalone binary uninterrupted, then stopped by SIGTERM after 6 s and run again until it ends,
// then killed with -9 after 6 s and run again; it reports the unique pages each fetched. It takes a minute or
// more, so it runs only with FRONTIER_RELIABILITY_TABLE=1 (FRONTIER_RELIABILITY_AFTER=2s moves the kills):
//
//	FRONTIER_RELIABILITY_TABLE=1 go test -tags integration -run TestReliabilityTable -v ./e2e
func TestReliabilityTable(t *testing.T) {
	if os.Getenv("FRONTIER_RELIABILITY_TABLE") == "" {
		t.Skip("set FRONTIER_RELIABILITY_TABLE=1 to measure docs/reliability.md's table")
	}
	after := 6 * time.Second
	if v := os.Getenv("FRONTIER_RELIABILITY_AFTER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("FRONTIER_RELIABILITY_AFTER=%q: %v", v, err)
		}
		after = d
	}
	bin := buildStandalone(t)
	for _, tc := range []struct {
		name  string
		plans []killPlan
	}{
		{"uninterrupted", nil},
		{fmt.Sprintf("SIGTERM after %v, then again until it ends", after), []killPlan{{sig: syscall.SIGTERM, after: after}}},
		{fmt.Sprintf("kill -9 after %v, then again until it ends", after), []killPlan{{sig: syscall.SIGKILL, after: after}}},
	} {
		wcfg := web.DefaultConfig()
		wcfg.Hosts, wcfg.PagesPerHost = 40, 200
		wcfg.Plain, wcfg.UseIPs = true, true
		site, err := web.New(wcfg)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		results := crawlWithKills(t, bin, site, reachablePages(t, site), []string{"--set", "spider.delay=0s"}, tc.plans)
		wall := time.Since(start)
		inFlight := 0
		for _, r := range results {
			inFlight += len(r.inFlight)
		}
		check, err := site.CheckCrawl(site.Seeds()...)
		site.Stop()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("| %s | %d | %d of %d reachable never fetched | %d fetched twice, %d in flight at the kill | %.1f s |", tc.name,
			check.Reachable-len(check.Missing), len(check.Missing), check.Reachable, len(check.Twice), inFlight, wall.Seconds())
	}
}

// TestStandaloneKillWARC is the archive's side of the kill promise, and issue 21's: a standalone crawl with
// warc.dir set, of a web where a tenth of the pages fail before they answer (their retries go through the
// queue), killed with SIGKILL four times at random moments and resumed each time, fetches every reachable page
// (none left unserved: every failed page was tried again until it answered), ends with every URL accounted for
// (crawlWithKills), and leaves every page the site served in the archive (warcio reads every file:
// oracle/check_warc.py), and no file with the ".open" name. A record is made durable before the spider
// journals the page's offset (so a journaled page, which is not fetched again, is in the archive), and each
// start finishes the files the killed run left open (warc.RecoverFile).
//
// The kills fall once the site has answered random fractions (under 0.8, in increasing order) of the reachable
// pages, each plus a random wait under 100 ms; a fraction the crawl already passed when the run starts (two
// close fractions) kills the run as it starts, in its recovery. The
// seed is logged; FRONTIER_KILL_SEED replays a run's fractions and waits (the crawl's own timing, and so what
// each kill cuts, still varies).
func TestStandaloneKillWARC(t *testing.T) {
	bin := buildStandalone(t)
	rng := rand.New(rand.NewPCG(uint64(envSeed(t, "FRONTIER_KILL_SEED")), 0))
	site := killSite(t, 10)
	reachable := reachablePages(t, site)
	warcDir := filepath.Join(t.TempDir(), "warc")
	extra := append(slices.Clone(killArgs), "--set", "warc.dir="+warcDir)
	plans := make([]killPlan, 4)
	for i := range plans {
		plans[i] = killPlan{sig: syscall.SIGKILL, frac: 0.8 * rng.Float64(), jitter: time.Duration(rng.Int64N(int64(100 * time.Millisecond)))}
	}
	slices.SortFunc(plans, func(a, b killPlan) int { return cmp.Compare(a.frac, b.frac) })
	for i := range plans {
		t.Logf("kill %d: at %.0f%% of the reachable pages, plus %v", i, 100*plans[i].frac, plans[i].jitter.Round(time.Millisecond))
	}
	crawlWithKills(t, bin, site, reachable, extra, plans)

	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Missing) > 0 || len(check.Unserved) > 0 {
		t.Errorf("%d of %d reachable pages never fetched: %v (unserved %v)", len(check.Missing), check.Reachable,
			first(check.Missing, 10), first(check.Unserved, 10))
	}
	checkArchived(t, site, warcDir, func(web.Request) bool { return true })
}
