//go:build integration

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/dbworker"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/hbase"
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
//
// and checks that every reachable page was fetched, that no process exited but those it killed, and that the
// pages fetched twice after each fault are at most what was in flight. It logs, per fault, the duplicates and
// the time to recover (until every process answers /readyz and a page is fetched again).
//
// It restarts the servers named by FRONTIER_TEST_KAFKA and FRONTIER_TEST_HBASE, so it runs only when
// FRONTIER_TEST_FAULTS=1 says they are the test's to restart: deploy/test.sh sets it in its last stage, for the
// servers it started itself or for a pair of its own on other ports (FRONTIER_TEST_INFRA_DIR and the
// FRONTIER_TEST_*_PORT variables, which deploy/down and deploy/up read).
func TestFaults(t *testing.T) {
	kafkaAddr, hbaseAddr := frontiertest.Server(t, "FRONTIER_TEST_KAFKA"), frontiertest.Server(t, "FRONTIER_TEST_HBASE")
	deploy := frontiertest.Server(t, "FRONTIER_TEST_DEPLOY_DIR")
	if os.Getenv("FRONTIER_TEST_FAULTS") != "1" {
		t.Skip("set FRONTIER_TEST_FAULTS=1 (deploy/test.sh does) to let the fault suite stop and start the servers at FRONTIER_TEST_KAFKA and FRONTIER_TEST_HBASE")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()
	root := filepath.Dir(deploy)
	run := fmt.Sprintf("faults%d", time.Now().UnixNano()%1e9)
	dir := t.TempDir()

	// The binaries, built as an operator would.
	bin := filepath.Join(dir, "bin")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+"/", "./cmd/dbworker", "./cmd/strategyworker", "./cmd/spider")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// Topics and tables of this run.
	topics := map[string]int{run + "-done": 2, run + "-score": 2, run + "-todo": 2, run + "-control": 1}
	var specs []kafkabus.TopicSpec
	for name, n := range topics {
		specs = append(specs, kafkabus.TopicSpec{Name: name, Partitions: n})
	}
	if err := kafkabus.EnsureTopics(ctx, []string{kafkaAddr}, specs); err != nil {
		t.Fatal(err)
	}
	hcfg := hbase.DefaultConfig()
	hcfg.Addr, hcfg.TablePrefix = hbaseAddr, run+"_"
	if err := hbase.EnsureSchema(ctx, hcfg); err != nil {
		t.Fatal(err)
	}
	defer func() {
		hb, err := hbase.New(context.WithoutCancel(ctx), hcfg, nil, nil)
		if err == nil {
			_ = hb.DropTables(context.WithoutCancel(ctx))
			hb.Close()
		}
	}()

	// The web: 10 hosts of 60 pages, and a politeness delay (1 s) that keeps the crawl going through every fault.
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.UseIPs = 10, 60, true
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 500*time.Millisecond, 200*time.Millisecond, 1<<20
	site := web.Start(t, wcfg)
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(site.Seeds(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reach, err := site.Reachable(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	reachable := len(reach.URLs())

	common := fmt.Sprintf(`log: {level: info, format: text}
metrics: {addr: "127.0.0.1:0"}
streams:
  spider_log:  {topic: %[1]s-done,  partitions: 2}
  scoring_log: {topic: %[1]s-score, partitions: 2}
  spider_feed: {topic: %[1]s-todo,  partitions: 2}
  control:     {topic: %[1]s-control, partitions: 1}
kafka: {brokers: ["%[2]s"]}
hbase: {addr: "%[3]s", table_prefix: %[1]s_}
spider: {delay: 1s, request_timeout: 10s, max_body_bytes: 262144}
stats_interval: 5s
shutdown_timeout: 10s
`, run, kafkaAddr, hbaseAddr)
	cfgDir := filepath.Join(dir, "configs")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"common.yaml": common, "dbworker.yaml": "", "strategyworker.yaml": "",
		"spider.yaml": ""} {
		if err := os.WriteFile(filepath.Join(cfgDir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &roleCluster{t: t, ctx: ctx, bin: bin, cfgDir: cfgDir, logDir: filepath.Join(dir, "logs"), procs: map[string]*roleProc{}}
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer c.stopAll()
	spiderArgs := func(p int) []string {
		args := []string{"--partition-id", fmt.Sprint(p), "--set", "spider.state_dir=" + filepath.Join(dir, fmt.Sprintf("spider-%d", p))}
		if p == 0 {
			args = append(args, "--seeds", seeds)
		}
		return args
	}
	// Two DB workers started at once: they must share the work, not both do all of it.
	c.start("dbw-a", "dbworker")
	c.start("dbw-b", "dbworker")
	c.start("sw-0", "strategyworker", "--partition-id", "0")
	c.start("sw-1", "strategyworker", "--partition-id", "1")
	c.start("spider-0", "spider", spiderArgs(0)...)
	c.start("spider-1", "spider", spiderArgs(1)...)

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
		waitFault(t, ctx, fmt.Sprintf("%.0f%% of the crawl", frac*100), func() bool { return float64(fetched()) >= frac*float64(reachable) })
	}
	recovered := func(f *fault, since time.Time, extra func() bool) {
		before := fetched()
		waitFault(t, ctx, "recovery from "+f.name, func() bool {
			return c.allReady() && (fetched() > before || fetched() >= reachable) && (extra == nil || extra())
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
	waitFault(t, ctx, "both DB workers to own a share of every role", func() bool {
		return c.logCount("dbw-a", "owning partitions") >= 3 && c.logCount("dbw-b", "owning partitions") >= 3
	})

	// 1. SIGKILL a spider mid-crawl, start it again: it re-fetches at most what it had in flight.
	atProgress(0.05)
	f := begin("SIGKILL spider 0", inFlight)
	c.kill("spider-0")
	c.start("spider-0", "spider", spiderArgs(0)...)
	recovered(f, time.Now(), func() bool { return c.logCount("spider-0", "owning partitions") > 0 })

	// 2. SIGKILL a strategy worker, start it again: its batch is replayed, idempotently.
	atProgress(0.12)
	f = begin("SIGKILL strategy worker 1", inFlight)
	c.kill("sw-1")
	c.start("sw-1", "strategyworker", "--partition-id", "1")
	recovered(f, time.Now(), func() bool { return c.logCount("sw-1", "owning partitions") > 0 })

	// 3. SIGKILL a DB worker: the other takes its partitions over (after the session timeout); then it comes back.
	atProgress(0.2)
	f = begin("SIGKILL DB worker A", inFlight+batches) // a batch sent but not acknowledged is sent again
	ownedB := c.logCount("dbw-b", "owning partitions")
	c.kill("dbw-a")
	killed := time.Now()
	waitFault(t, ctx, "DB worker B to take over", func() bool { return c.logCount("dbw-b", "owning partitions") >= ownedB+3 })
	recovered(f, killed, nil)
	c.start("dbw-a", "dbworker")

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
	waitFault(t, ctx, "a DB worker's /readyz to report HBase", func() bool {
		code, body := c.readyz("dbw-b")
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

	// The end of the crawl: every stream consumed, the queue empty, for a quiet few seconds.
	kcfg := kafkabus.DefaultConfig()
	kcfg.Brokers = []string{kafkaAddr}
	kcfg.SpiderLog = kafkabus.StreamConfig{Topic: run + "-done", Partitions: 2}
	kcfg.ScoringLog = kafkabus.StreamConfig{Topic: run + "-score", Partitions: 2}
	kcfg.SpiderFeed = kafkabus.StreamConfig{Topic: run + "-todo", Partitions: 2}
	b, err := kafkabus.New(kcfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	hb, err := hbase.New(ctx, hcfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close()
	var quiet time.Time
	waitFault(t, ctx, "the end of the crawl", func() bool {
		done, err := idle(ctx, b, hb)
		if err != nil || !done {
			quiet = time.Time{}
			return false
		}
		if quiet.IsZero() {
			quiet = time.Now()
		}
		return time.Since(quiet) > 3*time.Second
	})
	c.checkAlive()

	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Missing) > 0 || len(check.RobotsViolations) > 0 {
		t.Errorf("crawl of %d reachable URLs: missing %v, robots violations %v", check.Reachable, check.Missing, check.RobotsViolations)
	}
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
		if !regexp.MustCompile(`dispatched=[1-9]`).MatchString(readLog(filepath.Join(c.logDir, name+".log"))) {
			t.Errorf("%s dispatched nothing: the two DB workers did not share the batches", name)
		}
	}
	t.Logf("crawl: %d reachable pages, %d requests; fetched again:\n%s", check.Reachable, len(site.Requests()), strings.Join(dupLines, "\n"))
	for i, f := range faults {
		t.Logf("FAULT %-28s duplicates %3d (allowed %3d)  time to recover %s", f.name, dups[i], f.bound, f.recover.Round(100*time.Millisecond))
		if dups[i] > f.bound {
			t.Errorf("fault %q: %d pages fetched twice, more than the %d that could be in flight", f.name, dups[i], f.bound)
		}
	}
}

// roleCluster runs the role binaries as processes and watches them.
type roleCluster struct {
	t      *testing.T
	ctx    context.Context
	bin    string
	cfgDir string
	logDir string
	mu     sync.Mutex
	procs  map[string]*roleProc
}

type roleProc struct {
	name     string
	cmd      *exec.Cmd
	log      string
	killed   bool
	exited   chan struct{}
	err      error
	metrics  string // http://host:port of /metrics and /readyz
	logStart int    // where this run's lines start in log
}

func (c *roleCluster) start(name, role string, args ...string) {
	c.t.Helper()
	logPath := filepath.Join(c.logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	logStart := len(readLog(logPath))
	cmd := exec.Command(filepath.Join(c.bin, role), append([]string{"--config", filepath.Join(c.cfgDir, role+".yaml")}, args...)...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p := &roleProc{name: name, cmd: cmd, log: logPath, exited: make(chan struct{}), logStart: logStart}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	c.mu.Lock()
	c.procs[name] = p
	c.mu.Unlock()
}

func (c *roleCluster) kill(name string) {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	p.killed = true
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// checkAlive fails the test for every process that exited without being killed.
func (c *roleCluster) checkAlive() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		select {
		case <-p.exited:
			if !p.killed {
				c.t.Errorf("%s exited (%v); its log ends:\n%s", p.name, p.err, logTail(p.log, 30))
			}
		default:
		}
	}
}

func (c *roleCluster) stopAll() {
	c.mu.Lock()
	procs := slices.Collect(func(yield func(*roleProc) bool) {
		for _, p := range c.procs {
			if !yield(p) {
				return
			}
		}
	})
	c.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if c.t.Failed() {
		for _, p := range procs {
			c.t.Logf("---- %s ----\n%s", p.name, logTail(p.log, 40))
		}
	}
}

var metricsAddrRE = regexp.MustCompile(`msg="serving metrics" .*addr=(http://\S+)/metrics`)

// readyz returns the status and body of a process's /readyz (0 if it does not answer).
func (c *roleCluster) readyz(name string) (int, string) {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	if p.metrics == "" {
		// The log holds every run of the process: read this run's part.
		m := metricsAddrRE.FindStringSubmatch(readLog(p.log)[p.logStart:])
		if m == nil {
			return 0, ""
		}
		p.metrics = m[1]
	}
	cl := http.Client{Timeout: 2 * time.Second}
	resp, err := cl.Get(p.metrics + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// allReady reports whether every running process answers /readyz with 200.
func (c *roleCluster) allReady() bool {
	c.mu.Lock()
	var names []string
	for n, p := range c.procs {
		select {
		case <-p.exited:
		default:
			names = append(names, n)
		}
	}
	c.mu.Unlock()
	for _, n := range names {
		if code, _ := c.readyz(n); code != http.StatusOK {
			return false
		}
	}
	return true
}

// logCount counts the lines of this run of a process's log that contain s.
func (c *roleCluster) logCount(name, s string) int {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(readLog(p.log)[p.logStart:]))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			n++
		}
	}
	return n
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func logTail(path string, n int) string {
	lines := strings.Split(strings.TrimRight(readLog(path), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func waitFault(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
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
