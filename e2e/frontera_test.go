//go:build integration

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/partition"
)

// fronteraReport is what oracle/interop/crawl.py writes when it stops: its audit of every request Scrapy took
// from Frontera's scheduler, i.e. that Frontera's codec decoded from the spider feed.
type fronteraReport struct {
	Ready    *int64 `json:"ready"` // the feed position the spider started at; nil if it never opened
	Pages    int    `json:"pages"` // responses its parse callback saw
	Requests []struct {
		URL               string   `json:"url"`
		Host              string   `json:"host"`
		Fingerprint       string   `json:"fingerprint"`
		DomainFingerprint string   `json:"domain_fingerprint"`
		Score             *float64 `json:"score"`
		JID               *int64   `json:"jid"`
		FronteraPartition int      `json:"frontera_partition"`
		Problems          []string `json:"problems"`
	} `json:"requests"`
}

// TestFronteraSpiders crawls the synthetic web with two real Scrapy + Frontera 0.8.1 spider processes
// (oracle/interop/crawl.py: Frontera's FronteraScheduler and MessageBusBackend on Frontera's Kafka message bus,
// msgpack codec) driven by Frontier's strategy workers and DB worker, run as the built binaries with
// configs/frontera-compat.yaml. It checks that every reachable page was fetched exactly once (at the web's
// servers), that every request Frontera read from the feed carries Frontera's meta keys with Frontera's types
// and values (fingerprint, domain, score, jid), and that every host reached the spider of the partition
// Frontera's own Crc32NamePartitioner picks for it.
func TestFronteraSpiders(t *testing.T) {
	kafkaAddr, hbaseAddr := frontiertest.Server(t, "FRONTIER_TEST_KAFKA"), frontiertest.Server(t, "FRONTIER_TEST_HBASE")
	root, python := fronteraHarness(t)
	begin := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	log := frontiertest.Logger(t)
	run := fmt.Sprintf("fr%d", time.Now().UnixNano()%1e9)
	dir := t.TempDir()
	const spiders, strategyWorkers = 2, 2

	// Topics and tables of this run's own.
	kcfg := kafkabus.DefaultConfig()
	kcfg.Brokers, kcfg.ClientID = []string{kafkaAddr}, run
	kcfg.SpiderLog = kafkabus.StreamConfig{Topic: run + "-done", Partitions: strategyWorkers}
	kcfg.ScoringLog = kafkabus.StreamConfig{Topic: run + "-score", Partitions: 1}
	kcfg.SpiderFeed = kafkabus.StreamConfig{Topic: run + "-todo", Partitions: spiders}
	kcfg.Control = kafkabus.StreamConfig{Topic: run + "-control", Partitions: 1} // Frontier's own; Frontera has none
	if err := kafkabus.EnsureTopics(ctx, kcfg.Brokers, []kafkabus.TopicSpec{
		{Name: kcfg.SpiderLog.Topic, Partitions: strategyWorkers}, {Name: kcfg.ScoringLog.Topic, Partitions: 1},
		{Name: kcfg.SpiderFeed.Topic, Partitions: spiders}, {Name: kcfg.Control.Topic, Partitions: 1},
	}); err != nil {
		t.Fatal(err)
	}
	b, err := kafkabus.New(kcfg, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	hcfg := hbase.DefaultConfig()
	hcfg.Addr, hcfg.TablePrefix = hbaseAddr, run+"_"
	if err := hbase.EnsureSchema(ctx, hcfg); err != nil {
		t.Fatal(err)
	}
	hb, err := hbase.New(ctx, hcfg, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := hb.DropTables(context.WithoutCancel(ctx)); err != nil {
			t.Logf("drop tables: %v", err)
		}
		hb.Close()
	}()

	// The web, named by IP and port so that Scrapy's stock resolver and downloader reach it. Plain: only
	// regular pages (robots.txt answers 404), since Scrapy is the fetcher under test here, not Frontier's spider.
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain, wcfg.UseIPs = 6, 15, true, true
	site := web.Start(t, wcfg)
	hostsOf := map[int]int{}
	for _, s := range site.Seeds() {
		u, _ := url.Parse(s)
		hostsOf[partition.Crc32Name([]byte(u.Hostname()), spiders)]++
	}
	if !site.SharedIP() && len(hostsOf) != spiders {
		t.Fatalf("the web's hosts fall on feed partitions %v: change wcfg.Hosts so that every spider gets some", hostsOf)
	}

	// Frontier's workers, as the binaries, on Frontera's defaults (configs/frontera-compat.yaml) with this
	// run's topics, tables and partition counts.
	bin := filepath.Join(dir, "bin")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator), "./cmd/strategyworker", "./cmd/dbworker")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sets := []string{
		"kafka.brokers=" + kafkaAddr, "hbase.addr=" + hbaseAddr, "hbase.table_prefix=" + run + "_",
		"streams.spider_log.topic=" + kcfg.SpiderLog.Topic, fmt.Sprintf("streams.spider_log.partitions=%d", strategyWorkers),
		"streams.scoring_log.topic=" + kcfg.ScoringLog.Topic,
		"streams.spider_feed.topic=" + kcfg.SpiderFeed.Topic, fmt.Sprintf("streams.spider_feed.partitions=%d", spiders),
		"streams.control.topic=" + kcfg.Control.Topic,
		"metrics.addr=127.0.0.1:0", "stats_interval=5s", "log.level=info",
	}
	procs := &processes{t: t, dir: dir}
	defer procs.stopAll()
	compat := filepath.Join(root, "configs", "frontera-compat.yaml")
	for p := range strategyWorkers {
		args := []string{"--config", compat, "--partition-id", fmt.Sprint(p)}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		procs.start(ctx, fmt.Sprintf("strategyworker-%d", p), filepath.Join(bin, "strategyworker"), args, nil)
	}
	args := []string{"--config", compat}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	procs.start(ctx, "dbworker", filepath.Join(bin, "dbworker"), args, nil)

	// The Frontera spiders; each says READY once its feed consumer holds its position.
	env := []string{
		"FRONTERA_KAFKA_LOCATION=" + kafkaAddr,
		"FRONTERA_SPIDER_LOG_TOPIC=" + kcfg.SpiderLog.Topic, "FRONTERA_SPIDER_FEED_TOPIC=" + kcfg.SpiderFeed.Topic,
		"FRONTERA_SCORING_LOG_TOPIC=" + kcfg.ScoringLog.Topic,
		fmt.Sprintf("FRONTERA_SPIDER_LOG_PARTITIONS=%d", strategyWorkers), fmt.Sprintf("FRONTERA_SPIDER_FEED_PARTITIONS=%d", spiders),
	}
	reports := make([]string, spiders)
	var ready []<-chan string
	for p := range spiders {
		reports[p] = filepath.Join(dir, fmt.Sprintf("report-%d.json", p))
		name := fmt.Sprintf("frontera-spider-%d", p)
		ready = append(ready, procs.start(ctx, name, python, []string{filepath.Join(root, "oracle", "interop", "crawl.py"),
			"--partition", fmt.Sprint(p), "--report", reports[p]}, env))
	}
	for p, r := range ready {
		select {
		case line := <-r:
			t.Logf("frontera spider %d: %s", p, line)
		case <-time.After(90 * time.Second):
			t.Fatalf("frontera spider %d did not print READY within 90s", p)
		}
	}

	seeded := time.Now()
	// Seeds: the add_seeds messages Frontier's `spider --seeds` sends (Frontera 0.8 adds seeds through its
	// strategy worker instead), one per host, keyed by the host's fingerprint like every spider-log message.
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := codec.Msgpack{}
	out, err := b.Producer(ctx, bus.SpiderLog, partition.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range site.Seeds() {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		r := &frontier.Request{URL: s, Method: "GET"}
		fp, err := id.Fingerprint(s)
		if err != nil {
			t.Fatal(err)
		}
		r.SetMetaFingerprint(fp)
		d := id.Domain(u)
		r.SetMetaDomain(d)
		v, err := c.EncodeMessage(&frontier.AddSeeds{Seeds: []*frontier.Request{r}})
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Send(ctx, bus.Message{Key: []byte(d.Fingerprint), Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	out.Close()

	// Done when every group has committed everything, the queue is empty, and the servers saw no new request
	// for 4 s (Frontera's spider commits its feed offset every 5 s, before it has fetched what it read).
	var quietSince time.Time
	lastFetches := -1
	for {
		if ctx.Err() != nil || procs.failed() {
			t.Fatalf("the crawl did not finish: %d requests at the servers; %s", countFetches(site), procs.summary())
		}
		time.Sleep(250 * time.Millisecond)
		ok, err := idle(ctx, b, hb)
		if err != nil {
			t.Fatal(err)
		}
		n := countFetches(site)
		if !ok || n != lastFetches || n == 0 {
			lastFetches, quietSince = n, time.Time{}
			continue
		}
		if quietSince.IsZero() {
			quietSince = time.Now()
		}
		if time.Since(quietSince) > 4*time.Second {
			break
		}
	}
	crawled := time.Since(seeded)
	procs.stopAll()

	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if !check.OK() {
		t.Errorf("crawl of %d reachable URLs: missing %v, fetched twice %v, robots violations %v",
			check.Reachable, check.Missing, check.Twice, check.RobotsViolations)
	}
	t.Logf("Frontera spiders through Frontier's workers: %d reachable URLs, %d fetched; started in %v, crawled in %v (4 s quiet included)",
		check.Reachable, countFetches(site), seeded.Sub(begin).Round(time.Millisecond), crawled.Round(time.Millisecond))

	fetched := site.Fetches()
	seen := map[string]int{}
	for p, path := range reports {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("frontera spider %d wrote no report: %v", p, err)
		}
		var rep fronteraReport
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatalf("frontera spider %d report: %v", p, err)
		}
		if rep.Ready == nil {
			t.Errorf("frontera spider %d never opened its feed", p)
		}
		if len(rep.Requests) == 0 && hostsOf[p] > 0 {
			t.Errorf("frontera spider %d read no request from its feed partition", p)
		}
		t.Logf("frontera spider %d: %d requests from the feed, %d pages parsed", p, len(rep.Requests), rep.Pages)
		for _, r := range rep.Requests {
			for _, pr := range r.Problems {
				t.Errorf("frontera spider %d: %s: %s", p, r.URL, pr)
			}
			if r.FronteraPartition != p {
				t.Errorf("%s (host %s) read by spider %d; Frontera's Crc32NamePartitioner says %d", r.URL, r.Host, p, r.FronteraPartition)
			}
			if got := partition.Crc32Name([]byte(r.Host), spiders); got != r.FronteraPartition {
				t.Errorf("host %s: Frontier's Crc32Name = %d, Frontera's = %d", r.Host, got, r.FronteraPartition)
			}
			if fp, err := id.Fingerprint(r.URL); err != nil || fp.Hex() != r.Fingerprint {
				t.Errorf("%s: Frontier's fingerprint %v (%v), Frontera's meta fingerprint %s", r.URL, fp.Hex(), err, r.Fingerprint)
			}
			if r.JID == nil || *r.JID != 0 || r.Score == nil {
				t.Errorf("%s: meta jid %s, score %s; want jid 0 (Frontera's first job) and a score", r.URL, show(r.JID), show(r.Score))
			}
			n, err := web.Normalize("", r.URL)
			if err != nil {
				t.Errorf("%s: %v", r.URL, err)
				continue
			}
			seen[n]++
		}
	}
	// Every page the servers answered came through Frontera's scheduler, once.
	for u, n := range fetched {
		if strings.HasSuffix(u, "/robots.txt") {
			continue
		}
		if seen[u] != n {
			t.Errorf("%s: fetched %d times, read from the feed %d times", u, n, seen[u])
		}
	}
}

// show prints *v, or "none".
func show[T any](v *T) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}

// countFetches is the number of requests the site answered, robots.txt excluded.
func countFetches(site *web.Site) int {
	n := 0
	for u, c := range site.Fetches() {
		if !strings.HasSuffix(u, "/robots.txt") {
			n += c
		}
	}
	return n
}

// processes runs the test's child processes: output to log files (shown when the test fails), SIGTERM to stop.
type processes struct {
	t    *testing.T
	dir  string
	mu   sync.Mutex
	list []*proc
}

type proc struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{}
	err       error
}

// start runs path with args; it returns a channel that gets the first stdout line starting with READY.
func (ps *processes) start(ctx context.Context, name, path string, args, env []string) <-chan string {
	ps.t.Helper()
	logPath := filepath.Join(ps.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		ps.t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = f
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		ps.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		ps.t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(f, line)
			if strings.HasPrefix(line, "READY") {
				select {
				case ready <- line:
				default:
				}
			}
		}
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	ps.mu.Lock()
	ps.list = append(ps.list, p)
	ps.mu.Unlock()
	return ready
}

// failed reports whether a process exited before it was asked to.
func (ps *processes) failed() bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.list {
		select {
		case <-p.done:
			return true
		default:
		}
	}
	return false
}

func (ps *processes) summary() string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var s []string
	for _, p := range ps.list {
		select {
		case <-p.done:
			s = append(s, fmt.Sprintf("%s exited: %v", p.name, p.err))
		default:
			s = append(s, p.name+" running")
		}
	}
	return strings.Join(s, "; ")
}

// stopAll sends SIGTERM to every process (spiders first: they flush the spider log on the way out), waits up to
// 30 s each, then kills; it fails the test if one exited non-zero, and shows the logs of a failed test.
func (ps *processes) stopAll() {
	ps.mu.Lock()
	list := ps.list
	ps.list = nil
	ps.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- { // started workers first, spiders last: stop in reverse
		p := list[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			ps.t.Errorf("%s did not stop within 30s of SIGTERM", p.name)
		}
		var ee *exec.ExitError
		if p.err != nil && !(errors.As(p.err, &ee) && ee.Exited() && ee.ExitCode() == 0) {
			ps.t.Errorf("%s: %v", p.name, p.err)
		}
	}
	if ps.t.Failed() {
		for _, p := range list {
			data, _ := os.ReadFile(p.log)
			if len(data) > 8000 {
				data = data[len(data)-8000:]
			}
			ps.t.Logf("---- %s (last 8 KB of %s)\n%s", p.name, p.log, data)
		}
	}
}

// TestGoSpiderFronteraWorkers is the other direction: Frontier's spiders (the cmd/spider binary, on
// configs/frontera-compat.yaml) under Frontera 0.8.1's own strategy workers and DB worker
// (oracle/interop/worker.py: python -m frontera.worker.strategy / frontera.worker.db with Frontera's SQLAlchemy
// backend on SQLite, BasicCrawlingStrategy). Seeds go in the Frontera 0.8 way, through a strategy worker's
// --add-seeds run. It checks that every reachable page was fetched, and fetched once.
func TestGoSpiderFronteraWorkers(t *testing.T) {
	kafkaAddr := frontiertest.Server(t, "FRONTIER_TEST_KAFKA")
	root, python := fronteraHarness(t)
	begin := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	log := frontiertest.Logger(t)
	run := fmt.Sprintf("fw%d", time.Now().UnixNano()%1e9)
	dir := t.TempDir()
	const spiders, strategyWorkers = 2, 2

	kcfg := kafkabus.DefaultConfig()
	kcfg.Brokers, kcfg.ClientID = []string{kafkaAddr}, run
	kcfg.SpiderLog = kafkabus.StreamConfig{Topic: run + "-done", Partitions: strategyWorkers}
	kcfg.ScoringLog = kafkabus.StreamConfig{Topic: run + "-score", Partitions: 1}
	kcfg.SpiderFeed = kafkabus.StreamConfig{Topic: run + "-todo", Partitions: spiders}
	kcfg.Control = kafkabus.StreamConfig{Topic: run + "-control", Partitions: 1}
	stats := run + "-stats"
	if err := kafkabus.EnsureTopics(ctx, kcfg.Brokers, []kafkabus.TopicSpec{
		{Name: kcfg.SpiderLog.Topic, Partitions: strategyWorkers}, {Name: kcfg.ScoringLog.Topic, Partitions: 1},
		{Name: kcfg.SpiderFeed.Topic, Partitions: spiders}, {Name: kcfg.Control.Topic, Partitions: 1},
		{Name: stats, Partitions: 1},
	}); err != nil {
		t.Fatal(err)
	}
	b, err := kafkabus.New(kcfg, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain, wcfg.UseIPs = 6, 15, true, true
	site := web.Start(t, wcfg)

	bin := filepath.Join(dir, "bin")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator), "./cmd/spider")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	env := []string{
		"FRONTERA_KAFKA_LOCATION=" + kafkaAddr,
		"FRONTERA_SPIDER_LOG_TOPIC=" + kcfg.SpiderLog.Topic, "FRONTERA_SPIDER_FEED_TOPIC=" + kcfg.SpiderFeed.Topic,
		"FRONTERA_SCORING_LOG_TOPIC=" + kcfg.ScoringLog.Topic, "FRONTERA_STATS_LOG_TOPIC=" + stats,
		fmt.Sprintf("FRONTERA_SPIDER_LOG_PARTITIONS=%d", strategyWorkers), fmt.Sprintf("FRONTERA_SPIDER_FEED_PARTITIONS=%d", spiders),
	}
	swEnv := append(slices.Clone(env), "FRONTERA_SQLALCHEMY_ENGINE=sqlite:///"+filepath.Join(dir, "states.db"))
	dbwEnv := append(slices.Clone(env), "FRONTERA_SQLALCHEMY_ENGINE=sqlite:///"+filepath.Join(dir, "dbworker.db"))
	workerPy := filepath.Join(root, "oracle", "interop", "worker.py")
	zero := func(topic, group string) []string { return []string{"--start-at-zero", topic + ":" + group} }
	procs := &processes{t: t, dir: dir}
	defer procs.stopAll()

	// Frontera's DB worker (all three roles) and strategy workers; their groups start at offset 0.
	args := append(append(append([]string{workerPy}, zero(kcfg.ScoringLog.Topic, "dbw-scoring-log")...),
		zero(kcfg.SpiderLog.Topic, "dbw-spider-log")...), "--", "frontera.worker.db",
		"--config", "frontera_worker_settings", "--partitions", "0", "1")
	procs.start(ctx, "frontera-dbworker", python, args, dbwEnv)
	for p := range strategyWorkers {
		args := append(append([]string{workerPy}, zero(kcfg.SpiderLog.Topic, "sw-spider-log")...), "--",
			"frontera.worker.strategy", "--config", "frontera_worker_settings", "--partition-id", fmt.Sprint(p))
		procs.start(ctx, fmt.Sprintf("frontera-strategyworker-%d", p), python, args, swEnv)
	}
	// Frontier's spiders.
	sets := []string{
		"kafka.brokers=" + kafkaAddr,
		"streams.spider_log.topic=" + kcfg.SpiderLog.Topic, fmt.Sprintf("streams.spider_log.partitions=%d", strategyWorkers),
		"streams.scoring_log.topic=" + kcfg.ScoringLog.Topic,
		"streams.spider_feed.topic=" + kcfg.SpiderFeed.Topic, fmt.Sprintf("streams.spider_feed.partitions=%d", spiders),
		"streams.control.topic=" + kcfg.Control.Topic,
		"metrics.addr=127.0.0.1:0", "stats_interval=5s", "spider.delay=50ms", "spider.commit_interval=200ms",
	}
	compat := filepath.Join(root, "configs", "frontera-compat.yaml")
	for p := range spiders {
		args := []string{"--config", compat, "--partition-id", fmt.Sprint(p), "--set", "spider.state_dir=" + filepath.Join(dir, fmt.Sprintf("spider-%d", p))}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		procs.start(ctx, fmt.Sprintf("spider-%d", p), filepath.Join(bin, "spider"), args, nil)
	}

	// Seeds, Frontera 0.8's way: a strategy worker run in add-seeds mode schedules them and exits.
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(site.Seeds(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seeded := time.Now()
	add := exec.CommandContext(ctx, python, workerPy, "--", "frontera.worker.strategy", "--config", "frontera_worker_settings",
		"--partition-id", "0", "--add-seeds", "--seeds-url", "file://"+seeds)
	add.Env = append(os.Environ(), swEnv...)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("frontera add-seeds: %v\n%s", err, out)
	}

	// Done when the servers answered every reachable URL and then nothing new for 5 s (Frontera's workers
	// expose no "idle" that the test could wait for).
	want, err := site.Reachable(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	reachable := want.URLs(web.OK, web.HTTPError, web.Redirect, web.Large)
	var quietSince time.Time
	last := -1
	for {
		if ctx.Err() != nil || procs.failed() {
			check, _ := site.CheckCrawl(site.Seeds()...)
			t.Fatalf("the crawl did not finish: %d of %d reachable URLs fetched, missing %v; %s", check.Reachable-len(check.Missing),
				check.Reachable, check.Missing, procs.summary())
		}
		time.Sleep(250 * time.Millisecond)
		n := countFetches(site)
		fetched := site.Fetches()
		all := true
		for _, u := range reachable {
			if fetched[u] == 0 {
				all = false
				break
			}
		}
		if !all || n != last {
			last, quietSince = n, time.Time{}
			continue
		}
		if quietSince.IsZero() {
			quietSince = time.Now()
		}
		if time.Since(quietSince) > 5*time.Second {
			break
		}
	}
	crawled := time.Since(seeded)
	procs.stopAll()
	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if !check.OK() {
		t.Errorf("crawl of %d reachable URLs: missing %v, fetched twice %v, robots violations %v",
			check.Reachable, check.Missing, check.Twice, check.RobotsViolations)
	}
	t.Logf("Frontier's spiders under Frontera's workers: %d reachable URLs, %d fetched; started in %v, crawled in %v (5 s quiet included)",
		check.Reachable, countFetches(site), seeded.Sub(begin).Round(time.Millisecond), crawled.Round(time.Millisecond))
}

// fronteraHarness returns the repository root and the oracle venv's python, after checking that the venv can
// run the Frontera harness (skipped where it cannot, failed under CI=true, where deploy/test.sh builds it).
func fronteraHarness(t *testing.T) (root, python string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	python = filepath.Join(root, ".venv", "oracle", "bin", "python")
	probe := exec.Command(python, "-c", "import shims, kafka, scrapy.crawler, sqlalchemy") // shims imports frontera
	probe.Dir = filepath.Join(root, "oracle", "interop")
	if out, err := probe.CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the oracle venv cannot run the Frontera harness (%v): run oracle/setup.sh\n%s", err, out)
		}
		t.Skipf("the oracle venv cannot run the Frontera harness (%v): run oracle/setup.sh\n%s", err, out)
	}
	return root, python
}
