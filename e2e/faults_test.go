//go:build integration

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// TestFaults is the fault suite: one crawl of an adversarial synthetic web by the cluster's own binaries (2
// spiders, 2 strategy workers, 2 DB workers started at once, each a process), over a Kafka and an HBase that
// the test stops and starts with deploy/down and deploy/up. During the crawl, one after the other, in an order
// and at moments drawn from a seeded random generator, it
//
//   - kills a spider with SIGKILL and starts it again,
//   - kills a strategy worker with SIGKILL and starts it again,
//   - kills a DB worker with SIGKILL (the other takes its partitions over), and starts it again,
//   - restarts the Kafka broker,
//   - stops HBase and its Thrift gateway three times, for 10 s, 40 s and 90 s, then starts them again.
//
// Each fault begins at a random share of the crawl and a random delay after it, so it cuts batches in the
// middle rather than between them. After each, no process may have exited but the one the test killed. At the
// end, every reachable page was fetched, every scheduled URL is crawled, failed with its reason or queued
// (cluster.WaitIdle), and the pages fetched twice after each fault are at most what was in flight. It logs, per
// fault, the duplicates and the time to recover (until every process answers /readyz and a page is fetched
// again). The spiders archive what they fetch (warc.dir): after the crawl, every page the site served with a
// 2xx is in the archive, read with warcio, and no file keeps its ".open" name (a killed spider's is recovered
// when it starts again); and the crawl counters the DB workers keep (page_crawled and request_error totals)
// equal the messages on the spider log, each counted once through the faults.
//
// The web is not tuned to pass: hosts from fast to slow (5 ms to 600 ms), a large page on every host, pages
// that fail once with a 500 and pages slower than their host, robots rules, broken links and hosts found only
// deep into the crawl (web.Timing). The spiders' politeness delay (1 s) keeps the crawl going through every
// fault.
//
// The seed is logged; FRONTIER_FAULT_SEED replays a run's order and moments (the crawl's own timing, and so
// what each fault cuts, still varies).
//
// It restarts the servers named by FRONTIER_TEST_KAFKA and FRONTIER_TEST_HBASE, so it runs only when
// FRONTIER_TEST_FAULTS=1 says they are the test's to restart: deploy/test.sh sets it for a pair of servers of
// the suite's own on other ports (FRONTIER_TEST_INFRA_DIR and the FRONTIER_TEST_*_PORT variables, which
// deploy/down and deploy/up read), while its integration tests use the main pair.
func TestFaults(t *testing.T) {
	frontiertest.Server(t, "FRONTIER_TEST_KAFKA") // skip before the deploy check says why
	deploy := frontiertest.Server(t, "FRONTIER_TEST_DEPLOY_DIR")
	if os.Getenv("FRONTIER_TEST_FAULTS") != "1" {
		t.Skip("set FRONTIER_TEST_FAULTS=1 (deploy/test.sh does) to let the fault suite stop and start the servers at FRONTIER_TEST_KAFKA and FRONTIER_TEST_HBASE")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 13*time.Minute)
	defer cancel()
	seed := faultSeed(t)
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))

	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.UseIPs = 10, 60, true
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 500*time.Millisecond, 200*time.Millisecond, 1<<20
	wcfg.Timing = web.Timing{LatencyMin: 5 * time.Millisecond, LatencyMax: 600 * time.Millisecond, LargePage: true,
		FailOnce: 0.1, SlowPages: 0.05, Robots: true, Broken: true, Late: 0.2}
	// The scope follows every link, as in the report this suite grew from: the late hosts are on no seed's
	// domain.
	rc := startRoleCluster(t, ctx, "faults", wcfg, cluster.ProcessConfig(time.Second)+"scope: {follow: any}\n", true)
	c, site, reachable := rc.Binaries, rc.site, rc.reachable
	logCount := func(name, s string) int { return c.Get(name).LogCount(s) }

	fetched := func() int { return len(site.Requests()) }
	// In flight at most: each spider fetches one page per host at a time (conns_per_host 1); and a DB worker
	// whose send to the feed was cut by a broker restart or a kill (its outcome unknown) sends the batch again: a
	// batch per partition, at most db_worker.per_host requests of each host.
	inFlight := wcfg.Hosts + len(site.Special())
	batches := (wcfg.Hosts + len(site.Special())) * dbworker.DefaultConfig().PerHost

	// The faults, each a step that injects it and returns when it is over (the process started again, the server
	// answering again), and a condition recovery also waits for.
	type fault struct {
		name    string
		bound   int // duplicates allowed
		inject  func(f *fault) time.Time
		extra   func() bool
		start   time.Time
		recover time.Duration
	}
	sleep := func(d time.Duration) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			t.Fatalf("%v", context.Cause(ctx))
		}
	}
	killAndRestart := func(name string, restart func()) func(*fault) time.Time {
		return func(f *fault) time.Time {
			c.Get(name).Kill()
			restart()
			f.extra = func() bool { return logCount(name, "owning partitions") > 0 }
			return time.Now()
		}
	}
	hbaseOutage := func(d time.Duration) func(*fault) time.Time {
		return func(f *fault) time.Time {
			runDeploy(t, deploy, "down", "hbase")
			down := time.Now()
			if d >= 30*time.Second {
				cluster.WaitFor(t, ctx, "a worker's /readyz to report HBase", func() bool {
					for _, name := range []string{"dbw-a", "dbw-b", "sw-0", "sw-1"} {
						if code, body := c.Get(name).Readyz(); code == http.StatusServiceUnavailable && strings.Contains(body, "HBase") {
							return true
						}
					}
					return false
				})
			}
			sleep(d - time.Since(down))
			runDeploy(t, deploy, "up", "hbase")
			// What the workers saw also spans the stop and the start.
			t.Logf("HBase stopped for %s (asked %s), unreachable for %s", time.Since(down).Round(100*time.Millisecond), d, time.Since(f.start).Round(100*time.Millisecond))
			if time.Since(down) < d {
				t.Errorf("HBase was down for %s only, want %s", time.Since(down).Round(time.Second), d)
			}
			return time.Now()
		}
	}
	sp, sw, dbw := rnd.IntN(2), rnd.IntN(2), rnd.IntN(2)
	dbwName, other := []string{"dbw-a", "dbw-b"}[dbw], []string{"dbw-b", "dbw-a"}[dbw]
	faults := []*fault{
		{name: fmt.Sprintf("SIGKILL spider %d", sp), bound: inFlight, inject: killAndRestart(fmt.Sprintf("spider-%d", sp), func() { rc.startSpider(sp) })},
		{name: fmt.Sprintf("SIGKILL strategy worker %d", sw), bound: inFlight, inject: killAndRestart(fmt.Sprintf("sw-%d", sw), func() { rc.startStrategyWorker(sw) })},
		// The other DB worker takes the killed one's partitions over (after the session timeout); then it comes
		// back. A batch sent but not acknowledged is sent again.
		{name: "SIGKILL DB worker " + dbwName[len(dbwName)-1:], bound: inFlight + batches, inject: func(f *fault) time.Time {
			owned := logCount(other, "owning partitions")
			c.Get(dbwName).Kill()
			killed := time.Now()
			cluster.WaitFor(t, ctx, other+" to take over", func() bool { return logCount(other, "owning partitions") >= owned+3 })
			c.StartRole(dbwName, "dbworker")
			return killed
		}},
		{name: "Kafka broker restart", bound: inFlight + batches, inject: func(*fault) time.Time {
			runDeploy(t, deploy, "down", "kafka")
			runDeploy(t, deploy, "up", "kafka")
			return time.Now()
		}},
		{name: "HBase + Thrift down 10 s", bound: inFlight + batches, inject: hbaseOutage(10 * time.Second)},
		{name: "HBase + Thrift down 40 s", bound: inFlight + batches, inject: hbaseOutage(40 * time.Second)},
		{name: "HBase + Thrift down 90 s", bound: inFlight + batches, inject: hbaseOutage(90 * time.Second)},
	}
	rnd.Shuffle(len(faults), func(i, j int) { faults[i], faults[j] = faults[j], faults[i] })

	for i, f := range faults {
		// A random share of the crawl in the i-th of len(faults)+1 slices, then a random delay (up to 3 s, so the
		// fault lands in the middle of a batch).
		frac := (float64(i) + 0.2 + 0.7*rnd.Float64()) / float64(len(faults)+1)
		jitter := time.Duration(rnd.Int64N(int64(3 * time.Second)))
		last, lastAt := fetched(), time.Now()
		cluster.WaitFor(t, ctx, fmt.Sprintf("%.0f%% of the crawl", frac*100), func() bool {
			n := fetched()
			if n != last {
				last, lastAt = n, time.Now()
			} else if time.Since(lastAt) > 30*time.Second {
				// No fault is under way: a crawl that fetches nothing for 30 s is over or stuck short of its pages.
				c.CheckAlive()
				hb := rc.env.HBaseClient(t, nil, nil)
				frontiertest.RequireAccounted(t, frontiertest.AccountingStores{States: hb.States(), Queue: hb.Queue(), Pages: hb.Pages()})
				cluster.CheckCrawl(t, site, true)
				t.Fatalf("the crawl stopped at %d requests for %d reachable pages, before fault %d", n, reachable, i+1)
			}
			return float64(n) >= frac*float64(reachable)
		})
		sleep(jitter)
		f.start = time.Now()
		t.Logf("fault %d %q at %d fetches (%.0f%% + %s), %s", i+1, f.name, fetched(), frac*100, jitter.Round(time.Millisecond), f.start.Format("15:04:05.000"))
		end := f.inject(f)
		before := fetched()
		cluster.WaitFor(t, ctx, "recovery from "+f.name, func() bool {
			return c.AllReady() && (fetched() > before || fetched() >= reachable) && (f.extra == nil || f.extra())
		})
		f.recover = time.Since(end)
		t.Logf("fault %q: recovered %s after its end", f.name, f.recover.Round(100*time.Millisecond))
		if u := c.Unexpected(); len(u) > 0 {
			c.CheckAlive()
			t.Fatalf("after fault %q: %d processes exited", f.name, len(u))
		}
		sleep(3 * time.Second) // what the fault sends again is fetched before the next one begins
	}

	// The end of the crawl: every stream consumed, the queue empty, for a quiet few seconds; then the accounting
	// invariant (cluster.WaitIdle).
	cluster.WaitIdle(t, ctx, rc.env.Bus(t, "check", nil, nil), rc.env.HBaseClient(t, nil, nil),
		cluster.Wait{Quiet: 3 * time.Second, Retry: true})
	c.CheckAlive()

	check := cluster.CheckCrawl(t, site, true)
	// Duplicates per fault: a second fetch of a page that had its final answer (refetches) counts against the
	// fault during (or after) which it happened.
	var dupLines []string
	dups := make([]int, len(faults))
	before := 0
	for _, r := range refetches(site) {
		i := -1
		for j, f := range faults {
			if !r.Req.Start.Before(f.start) {
				i = j
			}
		}
		if len(dupLines) < 40 {
			dupLines = append(dupLines, fmt.Sprintf("%s again at %s (status %d, fault %d)", r.URL, r.Req.Start.Format("15:04:05.000"), r.Req.Status, i+1))
		}
		if i < 0 {
			before++
		} else {
			dups[i]++
		}
	}
	if before > 0 {
		t.Errorf("%d pages fetched twice before any fault (two DB workers started at once must not both feed)", before)
	}
	for _, name := range []string{"dbw-a", "dbw-b"} {
		if !regexp.MustCompile(`dispatched=[1-9]`).MatchString(readLog(c.Get(name).LogPath())) {
			t.Errorf("%s dispatched nothing: the two DB workers did not share the batches", name)
		}
	}
	t.Logf("crawl: %d reachable pages, %d requests; fetched again:\n%s", check.Reachable, len(site.Requests()), strings.Join(dupLines, "\n"))
	checkArchive(t, c.Procs, site, rc.warcDir)
	checkCounters(t, ctx, rc.env)
	t.Logf("FRONTIER_FAULT_SEED=%d", seed)
	for i, f := range faults {
		t.Logf("FAULT %d %-26s duplicates %3d (allowed %3d)  time to recover %s", i+1, f.name, dups[i], f.bound, f.recover.Round(100*time.Millisecond))
		if dups[i] > f.bound {
			t.Errorf("fault %q: %d pages fetched twice, more than the %d that could be in flight", f.name, dups[i], f.bound)
		}
	}
}

// faultSeed is the seed of a run's random moments: FRONTIER_FAULT_SEED when set (to replay a run), else the
// clock (envSeed).
func faultSeed(t *testing.T) int64 { return envSeed(t, "FRONTIER_FAULT_SEED") }

// envSeed is the seed of a test's random moments: the variable name when set (to replay a run), else the clock.
// It is logged either way. The variable is then removed from the test's environment until the test ends: the
// role binaries inherit it, and they read every FRONTIER_* variable but FRONTIER_TEST_* as a configuration key
// (configs/load.go), so they would refuse to start.
func envSeed(t *testing.T, name string) int64 {
	t.Helper()
	seed := time.Now().UnixNano()
	if v, ok := os.LookupEnv(name); ok {
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Setenv(name, v) })
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
	}
	t.Logf("random moments from %s=%d (set it to replay them)", name, seed)
	return seed
}

// roleCluster is the crawl TestFaults and TestDBWorkerPausedPastSession run: the synthetic web, and the role
// binaries on topics and tables of the run's own, 2 DB workers started at once (they must share the work, not
// both do all of it), 2 strategy workers and 2 spiders, spider 0 given the seeds.
type roleCluster struct {
	*cluster.Binaries
	env       *cluster.Env
	site      *web.Site
	seeds     string
	reachable int
	dir       string
	warcDir   string // "" without an archive
}

// startRoleCluster starts the web and the roles, with common as their common configuration (after the run's
// topics and tables) and, with warc, an archive, and returns once both DB workers own a share of every role's
// partitions.
func startRoleCluster(t *testing.T, ctx context.Context, name string, wcfg web.Config, common string, warc bool) *roleCluster {
	t.Helper()
	rc := &roleCluster{dir: t.TempDir(), env: cluster.New(t, name, cluster.Partitions{SpiderLog: 2, ScoringLog: 2, SpiderFeed: 2})}
	rc.site, rc.seeds, rc.reachable = startWeb(t, wcfg)
	if warc {
		rc.warcDir = filepath.Join(rc.dir, "warc")
	}
	rc.Binaries = cluster.NewBinaries(t, ctx, rc.env, rc.dir, common)
	a := rc.StartRole("dbw-a", "dbworker")
	b := rc.StartRole("dbw-b", "dbworker")
	for p := range 2 {
		rc.startStrategyWorker(p)
	}
	for p := range 2 {
		rc.startSpider(p)
	}
	cluster.WaitFor(t, ctx, "both DB workers to own a share of every role", func() bool {
		if len(rc.Unexpected()) > 0 {
			rc.CheckAlive()
			t.FailNow()
		}
		return a.LogCount("owning partitions") >= 3 && b.LogCount("owning partitions") >= 3
	})
	return rc
}

// startSpider starts (or starts again) spider p: its own state directory, the archive if any, and the seeds
// for spider 0 (given again on a restart: the spider's seed-file marker keeps them from being injected twice).
func (rc *roleCluster) startSpider(p int) *cluster.Proc {
	args := []string{"--partition-id", fmt.Sprint(p), "--set", "spider.state_dir=" + filepath.Join(rc.dir, fmt.Sprintf("spider-%d", p))}
	if rc.warcDir != "" {
		args = append(args, "--set", "warc.dir="+rc.warcDir, "--set", fmt.Sprintf("warc.hostname=spider-%d", p))
	}
	if p == 0 {
		args = append(args, "--seeds", rc.seeds)
	}
	return rc.StartRole(fmt.Sprintf("spider-%d", p), "spider", args...)
}

// startStrategyWorker starts (or starts again) strategy worker p.
func (rc *roleCluster) startStrategyWorker(p int) *cluster.Proc {
	return rc.StartRole(fmt.Sprintf("sw-%d", p), "strategyworker", "--partition-id", fmt.Sprint(p))
}

// checkArchive stops the processes (a spider finishes its WARC file on SIGTERM) and checks the archive: every
// page the site answered with a 2xx is in it, warcio reads every file, and no file is left ".open".
func checkArchive(t *testing.T, c *cluster.Procs, site *web.Site, warcDir string) {
	t.Helper()
	c.Stop()
	checkArchived(t, site, warcDir, func(r web.Request) bool { return r.Status >= 200 && r.Status <= 299 })
}

// checkCounters compares the crawl counters the DB workers keep in HBase (what frontierctl status shows) with
// the spider log itself: each page_crawled and request_error on the log must be counted exactly once, through
// the SIGKILLed DB worker's replay, the Kafka restart and the HBase outages (hbase/doc.go, "Metadata and
// domains"). The log is read to its end by a group of the test's own.
func checkCounters(t *testing.T, ctx context.Context, env *cluster.Env) {
	t.Helper()
	b := env.Bus(t, "counters", nil, nil)
	const group = "faults-counters-check"
	parts := make([]int, b.Partitions(bus.SpiderLog))
	for p := range parts {
		parts[p] = p
	}
	in, err := b.Consumer(ctx, bus.SpiderLog, group, parts)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var cd codec.Msgpack
	var crawled, failed int64
	for {
		lags, err := b.Lag(ctx, bus.SpiderLog, group)
		if err != nil {
			t.Fatal(err)
		}
		left := int64(0)
		for _, l := range lags {
			left += l
		}
		if left == 0 {
			break
		}
		msgs, err := in.Fetch(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			switch e, _ := cd.DecodeMessage(m.Value); e.(type) {
			case *frontier.PageCrawled:
				crawled++
			case *frontier.RequestError:
				failed++
			}
		}
		if err := in.Commit(ctx, msgs); err != nil {
			t.Fatal(err)
		}
	}
	d := env.HBaseClient(t, nil, nil).Domains()
	for _, c := range []struct {
		name string
		want int64
	}{{dbworker.CounterCrawled, crawled}, {dbworker.CounterErrors, failed}} {
		got, err := d.Get(ctx, c.name, []string{dbworker.CounterRow})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("counter %s = %d, messages on the spider log %d", c.name, got[0], c.want)
		if got[0] != c.want {
			t.Errorf("counter %s of %s = %d, the spider log holds %d such messages: counted not exactly once", c.name, dbworker.CounterRow, got[0], c.want)
		}
	}
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// deployRun runs deploy/<script> with the test's environment (FRONTIER_TEST_INFRA_DIR and the ports name the
// servers to stop and start).
func runDeploy(t *testing.T, deploy, script string, args ...string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(filepath.Join(deploy, script), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("deploy/%s %v: %v\n%s", script, args, err, out)
	}
	t.Logf("deploy/%s %s took %s", script, strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond))
}
