//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/control"
	"github.com/frontiercrawl/frontier/crawlstatus"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/frontiertest"
	testcluster "github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/standalone"
	_ "github.com/frontiercrawl/frontier/strategy/all"
	"github.com/frontiercrawl/frontier/strategyworker"
)

// TestOperateClusterCrawl runs a small cluster crawl over real Kafka and HBase (topics and tables of its own)
// and operates it with frontierctl as a person would: it blocks one host before any seed exists, adds the
// seeds at run time, watches `status --json` report crawling, checks at the synthetic web's servers that the
// blocked host got no request while every other host was crawled, pauses and unblocks it and checks that
// nothing is dispatched while paused, resumes, and waits for `status` to say finished (exit status 0) with
// totals equal to the outcomes on the spider log.
func TestOperateClusterCrawl(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	log := frontiertest.Logger(t)
	env := testcluster.New(t, "ctl", testcluster.Partitions{SpiderLog: 2, ScoringLog: 1, SpiderFeed: 2})

	// A config file for frontierctl naming this run's topics and tables.
	dir := t.TempDir()
	config := env.WriteConfig(t, dir, "common.yaml", "")
	ctl := func(args ...string) (string, int) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		n := 1 // the flags go after the command's name
		if args[0] == "seeds" {
			n = 2
		}
		args = append(append(append([]string{}, args[:n]...), "--config", config), args[n:]...)
		code := run(ctx, args, nil, &stdout, &stderr)
		if code == 1 || code == 2 {
			t.Fatalf("frontierctl %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		return stdout.String(), code
	}
	if _, code := ctl("topics"); code != 0 {
		t.Fatalf("topics: exit %d", code)
	}
	if _, code := ctl("hbase-schema"); code != 0 {
		t.Fatalf("hbase-schema: exit %d", code)
	}

	// Every process's metrics, for the monitoring check at the end (one instance of each role registers).
	reg := prometheus.NewRegistry()
	rec := &recorder{Registerer: reg, names: map[string]bool{}}

	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 4, 10
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 50*time.Millisecond, 50*time.Millisecond, 1<<20
	site := web.Start(t, wcfg)
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("# run-time seeds\n"+strings.Join(site.Seeds(), "\n")+"\nnot a url\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The blocked host: the first content host.
	blockedHost := site.Hosts()[0]
	bu, err := url.Parse(blockedHost.Origin)
	if err != nil {
		t.Fatal(err)
	}
	blocked := bu.Hostname()

	// The workers, each following the control stream as cmd/dbworker and cmd/spider do.
	var followers []*control.Follower
	follow := func(cl *testcluster.Cluster, name string) *control.State {
		var r prometheus.Registerer
		if len(followers) == 0 {
			r = rec
		}
		f, err := control.Follow(ctx, cl.Bus, env.Name+"-"+name, 2*time.Second, log.With("follower", name), r)
		if err != nil {
			t.Fatal(err)
		}
		followers = append(followers, f)
		return f.State
	}
	roles := testcluster.FastRoles()
	roles.DialContext, roles.Logger, roles.Registerer = site.DialContext, log, rec
	var dbwControl *countingControl
	roles.EditDBWorker = func(cl *testcluster.Cluster, _ int, d *dbworker.Deps) {
		dbwControl = &countingControl{State: follow(cl, "dbworker")}
		d.Counters, d.Control = cl.HBase.Domains(), dbwControl
	}
	roles.EditStrategyWorker = func(cl *testcluster.Cluster, _ int, d *strategyworker.Deps) { d.Domains = cl.HBase.Domains() }
	roles.EditSpider = func(cl *testcluster.Cluster, p int, d *spider.Deps) {
		scores, err := bus.OpenProducer(ctx, cl.Bus, bus.ScoringLog)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = scores.Close() })
		d.Hold = &control.Holder{State: follow(cl, fmt.Sprint("spider", p)), Out: scores, Codec: cl.Codec}
	}
	cl := testcluster.Start(t, ctx, env, roles)
	b, id, c := cl.Bus, cl.Identity, cl.Codec
	defer func() {
		if err := cl.Stop(); err != nil {
			t.Error(err)
		}
		for _, f := range followers {
			f.Stop()
		}
	}()

	var statusCalls int
	var statusTime, statusMax time.Duration
	status := func() crawlstatus.Status {
		t.Helper()
		start := time.Now()
		out, code := ctl("status", "--json")
		d := time.Since(start)
		statusCalls, statusTime, statusMax = statusCalls+1, statusTime+d, max(statusMax, d)
		var s crawlstatus.Status
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("status --json printed %q: %v", out, err)
		}
		if code != s.Verdict.ExitCode() {
			t.Fatalf("status exit %d, verdict %s", code, s.Verdict.State)
		}
		return s
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("timed out waiting for %s", what)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}

	// Nothing yet: finished (an empty crawl is a finished one).
	if s := status(); s.Verdict.State != crawlstatus.Finished {
		t.Fatalf("before any seed: verdict %s %v, want finished", s.Verdict.State, s.Verdict.Reasons)
	}
	// Block, and wait until every worker acknowledged it.
	ctl("block", blocked)
	waitFor("the block to be applied by every worker", func() bool {
		for _, f := range followers {
			if !f.State.Blocked(blocked) {
				return false
			}
		}
		return true
	})
	// Seeds at run time.
	ctl("seeds", "add", seeds)
	sawCrawling := false
	var held crawlstatus.Status
	waitFor("every host but the blocked one to be crawled", func() bool {
		s := status()
		sawCrawling = sawCrawling || s.Verdict.State == crawlstatus.Crawling
		if s.Totals.Crawled == 0 || s.Totals.InFlight > 0 || s.Totals.Queued == 0 {
			return false
		}
		for _, l := range s.Lags {
			if l.Lag > 0 {
				return false
			}
		}
		for _, h := range s.TopQueued {
			if h.Host != blocked {
				return false
			}
		}
		held = s
		return true
	})
	if !sawCrawling {
		t.Error("status never said crawling")
	}
	if !held.Control.Paused && (len(held.Control.Blocked) != 1 || held.Control.Blocked[0] != blocked) {
		t.Errorf("status control = %+v, want %s blocked", held.Control, blocked)
	}
	if n := len(blockedHost.Requests()); n != 0 {
		t.Fatalf("the blocked host %s answered %d requests after the block was acknowledged", blocked, n)
	}
	t.Logf("while %s was blocked: %d crawled, %d errors, %d of its URLs queued", blocked, held.Totals.Crawled, held.Totals.Errors, held.Totals.Queued)

	// Pause, then unblock: the blocked host's URLs are queued and unblocked, and still nothing is dispatched while
	// paused. Every round of the batch generator asks Paused first; after a few rounds that found the crawl paused
	// with the unblock applied, the host has had no request and its URLs are still queued.
	ctl("pause")
	waitFor("the pause to be applied by every worker", func() bool {
		for _, f := range followers {
			if !f.State.Paused() {
				return false
			}
		}
		return true
	})
	ctl("unblock", blocked)
	waitFor("the unblock to be applied by every worker", func() bool {
		for _, f := range followers {
			if f.State.Blocked(blocked) {
				return false
			}
		}
		return true
	})
	rounds := dbwControl.pausedRounds.Load()
	waitFor("the batch generator to find the crawl paused 5 times", func() bool { return dbwControl.pausedRounds.Load() >= rounds+5 })
	if n := len(blockedHost.Requests()); n != 0 {
		t.Fatalf("the unblocked host %s answered %d requests while dispatch was paused", blocked, n)
	}
	if s := status(); s.Totals.Queued != held.Totals.Queued || !s.Control.Paused {
		t.Fatalf("while paused: %d queued (want the %d held for %s), control %+v", s.Totals.Queued, held.Totals.Queued, blocked, s.Control)
	}
	ctl("resume")
	var final crawlstatus.Status
	waitFor("status to say finished", func() bool {
		final = status()
		return final.Verdict.State == crawlstatus.Finished
	})
	if len(blockedHost.Requests()) == 0 {
		t.Fatalf("the unblocked host %s got no request", blocked)
	}
	// Finished: every stream committed and the queue empty, so nothing is in flight; the end-of-crawl invariant.
	frontiertest.RequireAccounted(t, frontiertest.AccountingStores{States: cl.HBase.States(), Queue: cl.HBase.Queue(), Pages: cl.HBase.Pages()})
	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if !check.OK() {
		t.Errorf("crawl of %d reachable URLs: missing %v, fetched twice %v, robots violations %v",
			check.Reachable, check.Missing, check.Twice, check.RobotsViolations)
	}

	// The totals are the spider log's outcomes, counted here from the log itself.
	in, err := b.Consumer(ctx, bus.SpiderLog, env.Name+"-count", []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var pages, errs int64
	for left := total(t, ctx, b, env.Name+"-count"); left > 0; {
		msgs, err := in.Fetch(ctx, 1024)
		if err != nil {
			t.Fatal(err)
		}
		left -= int64(len(msgs))
		for _, m := range msgs {
			e, err := c.DecodeMessage(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			switch e.(type) {
			case *frontier.PageCrawled:
				pages++
			case *frontier.RequestError:
				errs++
			}
		}
	}
	if final.Totals.Crawled != pages || final.Totals.Errors != errs || final.Totals.Queued != 0 || final.Totals.InFlight != 0 {
		t.Errorf("final totals %+v, want crawled %d, errors %d, nothing queued or in flight", final.Totals, pages, errs)
	}
	t.Logf("finished: %d crawled, %d errors; top errors %v", final.Totals.Crawled, final.Totals.Errors, final.TopErrors)
	t.Logf("status: %d calls, mean %v, max %v (each opens Kafka and HBase clients, replays the control topic)",
		statusCalls, (statusTime / time.Duration(statusCalls)).Round(time.Millisecond), statusMax.Round(time.Millisecond))

	// The dashboard's and alerts' metrics, against the /metrics pages of these workers and of a standalone
	// crawl (the state Bloom filter lives in the standalone).
	scrape := func(g prometheus.Gatherer) string {
		srv := httptest.NewServer(promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	sreg := prometheus.NewRegistry()
	srec := &recorder{Registerer: sreg, names: rec.names}
	ecfg := standalone.DefaultConfig()
	ecfg.DataDir, ecfg.StopWhenDone, ecfg.QuietPeriod = filepath.Join(dir, "standalone"), true, 500*time.Millisecond
	ecfg.Spider.Delay, ecfg.Spider.RequestTimeout = 10*time.Millisecond, time.Second
	ecfg.Pebble.Bloom.Expected = 100_000
	sum, err := standalone.Run(ctx, ecfg, standalone.Deps{Seeds: seeds, Identity: id, DialContext: site.DialContext,
		Logger: log, Registerer: srec})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("standalone crawl for the scrape: %d pages", sum.Pages)
	frontiertest.RequireStandaloneAccounted(t, ecfg.DataDir)
	checkMonitoring(t, scrape(reg)+scrape(sreg), rec.names)
}

// countingControl is the DB worker's control state, counting the times the batch generator found the crawl paused.
type countingControl struct {
	*control.State
	pausedRounds atomic.Int64
}

func (c *countingControl) Paused() bool {
	p := c.State.Paused()
	if p {
		c.pausedRounds.Add(1)
	}
	return p
}

func total(t *testing.T, ctx context.Context, b *kafkabus.Bus, group string) int64 {
	lags, err := b.Lag(ctx, bus.SpiderLog, group)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, l := range lags {
		n += l
	}
	return n
}
