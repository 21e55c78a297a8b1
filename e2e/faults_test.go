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
	"slices"
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

// TestFaults is the fault suite: a crawl of the synthetic web by the cluster's own binaries (2 spiders, 2
// strategy workers, 2 DB workers started at once, each a process), over a Kafka and an HBase that the test
// stops and starts with deploy/down and deploy/up. During the crawl, one after the other, it
//
//   - kills spider 0 with SIGKILL and starts it again,
//   - kills strategy worker 1 with SIGKILL and starts it again,
//   - kills DB worker A with SIGKILL (B takes its partitions over), and starts it again,
//   - restarts the Kafka broker,
//   - stops HBase and its Thrift gateway for more than 60 s, then starts them again,
//   - stops them again at a random moment (mid-batch, not between batches), waits 10 s, starts them again,
//
// and checks that every reachable page was fetched, that no process exited but those it killed, and that the
// pages fetched twice after each fault are at most what was in flight. It logs, per fault, the duplicates and
// the time to recover (until every process answers /readyz and a page is fetched again). The spiders archive
// what they fetch (warc.dir): after the crawl, every page the site served with a 2xx is in the archive, read
// with warcio, and no file keeps its ".open" name (the killed spider's is recovered when it starts again);
// and the crawl counters the DB workers keep (page_crawled and request_error totals) equal the messages on the
// spider log, each counted once through the faults.
// The random moments come from FRONTIER_TEST_FAULTS_SEED when set, else from the clock; the seed is logged.
//
// It restarts the servers named by FRONTIER_TEST_KAFKA and FRONTIER_TEST_HBASE, so it runs only when
// FRONTIER_TEST_FAULTS=1 says they are the test's to restart: deploy/test.sh sets it in its last stage, for the
// servers it started itself or for a pair of its own on other ports (FRONTIER_TEST_INFRA_DIR and the
// FRONTIER_TEST_*_PORT variables, which deploy/down and deploy/up read).
func TestFaults(t *testing.T) {
	frontiertest.Server(t, "FRONTIER_TEST_KAFKA") // skip before the deploy check says why
	deploy := frontiertest.Server(t, "FRONTIER_TEST_DEPLOY_DIR")
	if os.Getenv("FRONTIER_TEST_FAULTS") != "1" {
		t.Skip("set FRONTIER_TEST_FAULTS=1 (deploy/test.sh does) to let the fault suite stop and start the servers at FRONTIER_TEST_KAFKA and FRONTIER_TEST_HBASE")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()
	dir := t.TempDir()

	// Topics and tables of this run.
	env := cluster.New(t, "faults", cluster.Partitions{SpiderLog: 2, ScoringLog: 2, SpiderFeed: 2})

	// The web: 10 hosts of 60 pages, and a politeness delay (1 s) that keeps the crawl going through every fault.
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.UseIPs = 10, 60, true
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 500*time.Millisecond, 200*time.Millisecond, 1<<20
	site, seeds, reachable := startWeb(t, wcfg)

	// The role binaries, built as an operator would.
	c := cluster.NewBinaries(t, ctx, env, dir, cluster.ProcessConfig(time.Second))
	start := func(name, role string, args ...string) { c.StartRole(name, role, args...) }
	logCount := func(name, s string) int { return c.Get(name).LogCount(s) }
	warcDir := filepath.Join(dir, "warc")
	spiderArgs := func(p int) []string {
		args := []string{"--partition-id", fmt.Sprint(p), "--set", "spider.state_dir=" + filepath.Join(dir, fmt.Sprintf("spider-%d", p)),
			"--set", "warc.dir=" + warcDir, "--set", fmt.Sprintf("warc.hostname=spider-%d", p)}
		if p == 0 {
			args = append(args, "--seeds", seeds)
		}
		return args
	}
	// Two DB workers started at once: they must share the work, not both do all of it.
	start("dbw-a", "dbworker")
	start("dbw-b", "dbworker")
	start("sw-0", "strategyworker", "--partition-id", "0")
	start("sw-1", "strategyworker", "--partition-id", "1")
	start("spider-0", "spider", spiderArgs(0)...)
	start("spider-1", "spider", spiderArgs(1)...)

	seed := time.Now().UnixNano()
	if v := os.Getenv("FRONTIER_TEST_FAULTS_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("FRONTIER_TEST_FAULTS_SEED=%q: %v", v, err)
		}
	}
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("random moments from FRONTIER_TEST_FAULTS_SEED=%d", seed)
	fetched := func() int { return len(site.Requests()) }
	// In flight at most: each spider fetches one page per host at a time (conns_per_host 1); and a DB worker
	// whose send to the feed was cut by a broker restart (its outcome unknown) sends the batch again: a batch
	// per partition, at most db_worker.per_host requests of each host.
	inFlight := wcfg.Hosts + len(site.Special())
	batches := (wcfg.Hosts + len(site.Special())) * dbworker.DefaultConfig().PerHost
	type fault struct {
		name    string
		start   time.Time
		recover time.Duration
		bound   int // duplicates allowed
	}
	var faults []*fault
	atProgress := func(frac float64) {
		cluster.WaitFor(t, ctx, fmt.Sprintf("%.0f%% of the crawl", frac*100), func() bool { return float64(fetched()) >= frac*float64(reachable) })
	}
	recovered := func(f *fault, since time.Time, extra func() bool) {
		before := fetched()
		cluster.WaitFor(t, ctx, "recovery from "+f.name, func() bool {
			return c.AllReady() && (fetched() > before || fetched() >= reachable) && (extra == nil || extra())
		})
		f.recover = time.Since(since)
		t.Logf("fault %q: recovered %s after its end", f.name, f.recover.Round(100*time.Millisecond))
		time.Sleep(5 * time.Second) // what the fault sends again is fetched before the next one begins
	}
	begin := func(name string, bound int) *fault {
		f := &fault{name: name, start: time.Now(), bound: bound}
		faults = append(faults, f)
		t.Logf("fault %q at %d fetches, %s", name, fetched(), f.start.Format("15:04:05.000"))
		return f
	}
	cluster.WaitFor(t, ctx, "both DB workers to own a share of every role", func() bool {
		return logCount("dbw-a", "owning partitions") >= 3 && logCount("dbw-b", "owning partitions") >= 3
	})

	// 1. SIGKILL a spider mid-crawl, start it again: it re-fetches at most what it had in flight.
	atProgress(0.05)
	f := begin("SIGKILL spider 0", inFlight)
	c.Get("spider-0").Kill()
	start("spider-0", "spider", spiderArgs(0)...)
	recovered(f, time.Now(), func() bool { return logCount("spider-0", "owning partitions") > 0 })

	// 2. SIGKILL a strategy worker, start it again: its batch is replayed, idempotently.
	atProgress(0.12)
	f = begin("SIGKILL strategy worker 1", inFlight)
	c.Get("sw-1").Kill()
	start("sw-1", "strategyworker", "--partition-id", "1")
	recovered(f, time.Now(), func() bool { return logCount("sw-1", "owning partitions") > 0 })

	// 3. SIGKILL a DB worker: the other takes its partitions over (after the session timeout); then it comes back.
	atProgress(0.2)
	f = begin("SIGKILL DB worker A", inFlight+batches) // a batch sent but not acknowledged is sent again
	ownedB := logCount("dbw-b", "owning partitions")
	c.Get("dbw-a").Kill()
	killed := time.Now()
	cluster.WaitFor(t, ctx, "DB worker B to take over", func() bool { return logCount("dbw-b", "owning partitions") >= ownedB+3 })
	recovered(f, killed, nil)
	start("dbw-a", "dbworker")

	// 4. Restart the Kafka broker.
	atProgress(0.3)
	f = begin("Kafka broker restart", inFlight+batches)
	runDeploy(t, deploy, "down", "kafka")
	runDeploy(t, deploy, "up", "kafka")
	recovered(f, time.Now(), nil)

	// 5. Stop HBase and its gateway for more than 60 s: 60 s stopped, then its start (15-40 s here). A start
	// quicker than expected must not shorten the outage below what the test claims.
	atProgress(0.4)
	f = begin("HBase + Thrift down > 60 s", inFlight+batches)
	runDeploy(t, deploy, "down", "hbase")
	down := time.Now()
	cluster.WaitFor(t, ctx, "a DB worker's /readyz to report HBase", func() bool {
		code, body := c.Get("dbw-b").Readyz()
		return code == http.StatusServiceUnavailable && strings.Contains(body, "HBase")
	})
	for time.Since(down) < 60*time.Second && ctx.Err() == nil {
		time.Sleep(time.Second)
	}
	runDeploy(t, deploy, "up", "hbase")
	if d := time.Since(down); d < 60*time.Second {
		t.Errorf("HBase was down for %s only, want more than 60 s", d.Round(time.Second))
	} else {
		t.Logf("HBase was down for %s", d.Round(time.Second))
	}
	recovered(f, time.Now(), nil)

	// 6. Stop HBase and its gateway again at a random moment (a random point of the crawl and a random delay
	// after it, so the outage cuts batches in the middle rather than between them), wait 10 s, start them: the
	// outage the workers see also spans the stop and the start (25 s and 19 s in one run).
	atProgress(0.5 + 0.15*rnd.Float64())
	jitter := time.Duration(rnd.Int64N(int64(3 * time.Second)))
	select {
	case <-time.After(jitter):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	f = begin("HBase + Thrift restart at random", inFlight+batches)
	t.Logf("HBase stopped %s after %d fetches", jitter.Round(time.Millisecond), fetched())
	runDeploy(t, deploy, "down", "hbase")
	select {
	case <-time.After(10 * time.Second):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	runDeploy(t, deploy, "up", "hbase")
	recovered(f, time.Now(), nil)

	// The end of the crawl: every stream consumed, the queue empty, for a quiet few seconds.
	cluster.WaitIdle(t, ctx, env.Bus(t, "check", nil, nil), env.HBaseClient(t, nil, nil),
		cluster.Wait{Quiet: 3 * time.Second, Retry: true})
	c.CheckAlive()

	check := cluster.CheckCrawl(t, site, true)
	// Duplicates per fault: a second fetch of a page that had its final answer counts against the fault during
	// (or after) which it happened. A page that answered 5xx, 408 or 429, or did not answer, is fetched again on
	// purpose (the strategy worker's retries).
	seen := map[string]int{}
	var dupLines []string
	dups := make([]int, len(faults))
	before := 0
	for _, r := range site.Requests() {
		if strings.HasSuffix(r.Target, "/robots.txt") {
			continue // a restarted spider reads robots.txt again, on purpose
		}
		h := site.Host(r.Host)
		if h == nil {
			continue
		}
		u, err := web.Normalize(h.Origin+"/", r.Target)
		if err != nil {
			u = h.Origin + r.Target
		}
		prev := seen[u]
		if final := r.Status != 0 && r.Status != 408 && r.Status != 429 && r.Status < 500; final {
			seen[u]++
		}
		if prev == 0 {
			continue
		}
		i := -1
		for j, f := range faults {
			if !r.Start.Before(f.start) {
				i = j
			}
		}
		if len(dupLines) < 40 {
			dupLines = append(dupLines, fmt.Sprintf("%s again at %s (status %d, fault %d)", u, r.Start.Format("15:04:05.000"), r.Status, i))
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
	checkArchive(t, c.Procs, site, warcDir)
	checkCounters(t, ctx, env)
	for i, f := range faults {
		t.Logf("FAULT %-28s duplicates %3d (allowed %3d)  time to recover %s", f.name, dups[i], f.bound, f.recover.Round(100*time.Millisecond))
		if dups[i] > f.bound {
			t.Errorf("fault %q: %d pages fetched twice, more than the %d that could be in flight", f.name, dups[i], f.bound)
		}
	}
}

// checkArchive stops the processes (a spider finishes its WARC file on SIGTERM) and checks the archive: every
// page the site answered with a 2xx is in it, warcio reads every file, and no file is left ".open".
func checkArchive(t *testing.T, c *cluster.Procs, site *web.Site, warcDir string) {
	t.Helper()
	c.Stop()
	if open, _ := filepath.Glob(filepath.Join(warcDir, "*.open")); len(open) > 0 {
		t.Errorf("WARC files left open after a clean stop: %v", open)
	}
	sum := frontiertest.CheckWARC(t, warcDir)
	archived := map[string]bool{}
	for _, r := range sum.Responses {
		archived[r.URI] = true
	}
	var lost []string
	served := 0
	for _, r := range site.Requests() {
		h := site.Host(r.Host)
		if h == nil || r.Status < 200 || r.Status > 299 || strings.HasSuffix(r.Target, "/robots.txt") {
			continue
		}
		served++
		if u := h.Origin + r.Target; !archived[u] && !slices.Contains(lost, u) {
			lost = append(lost, u)
		}
	}
	t.Logf("archive: %d files, %d response records; %d 2xx answers served", sum.Files, len(sum.Responses), served)
	if len(lost) > 0 {
		t.Errorf("%d pages served with a 2xx are not in the archive: %v", len(lost), lost[:min(10, len(lost))])
	}
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
