//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/cluster"
	"github.com/frontiercrawl/frontier/frontiertest/web"
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
	root, python, ctx := fronteraHarness(t)
	begin := time.Now()
	log := frontiertest.Logger(t)
	dir := t.TempDir()
	const spiders, strategyWorkers = 2, 2

	// Topics and tables of this run's own.
	env := cluster.New(t, "fr", cluster.Partitions{SpiderLog: strategyWorkers, ScoringLog: 1, SpiderFeed: spiders})
	kcfg, kafkaAddr := env.Kafka, env.Kafka.Brokers[0]
	b := env.Bus(t, "main", log, nil)
	hb := env.HBaseClient(t, log, nil)

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
	bin := cluster.Build(t, ctx, "./cmd/strategyworker", "./cmd/dbworker")
	sets := append(env.Sets(), "metrics.addr=127.0.0.1:0", "stats_interval=5s", "log.level=info")
	procs := cluster.NewProcs(t, dir)
	procs.StrictStop = true
	compat := filepath.Join(root, "configs", "frontera-compat.yaml")
	for p := range strategyWorkers {
		args := []string{"--config", compat, "--partition-id", fmt.Sprint(p)}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		procs.Start(fmt.Sprintf("strategyworker-%d", p), cluster.Cmd{Path: filepath.Join(bin, "strategyworker"), Args: args})
	}
	args := []string{"--config", compat}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	procs.Start("dbworker", cluster.Cmd{Path: filepath.Join(bin, "dbworker"), Args: args})

	// The Frontera spiders; each says READY once its feed consumer holds its position.
	frEnv := []string{
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
		ready = append(ready, procs.Start(name, cluster.Cmd{Path: python, Args: []string{filepath.Join(root, "oracle", "interop", "crawl.py"),
			"--partition", fmt.Sprint(p), "--report", reports[p]}, Env: frEnv, Ready: "READY"}).Ready())
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
	id := cluster.Identity(t)
	c := codec.Msgpack{}
	out, err := bus.OpenProducer(ctx, b, bus.SpiderLog)
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
	waitQuiet(t, ctx, procs, site, 4*time.Second, func() (bool, error) { return cluster.Idle(ctx, b, hb.Queue()) })
	crawled := time.Since(seeded)
	procs.Stop()
	// Idle: every stream committed and the queue empty, so nothing is in flight; the end-of-crawl invariant on
	// Frontier's tables.
	frontiertest.RequireAccounted(t, frontiertest.AccountingStores{States: hb.States(), Queue: hb.Queue(), Pages: hb.Pages()})

	check := cluster.CheckCrawl(t, site, false)
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

// waitQuiet waits until done holds and the servers answered a request and then no new one for quiet; it fails
// the test when a process exits or ctx ends first.
func waitQuiet(t *testing.T, ctx context.Context, procs *cluster.Procs, site *web.Site, quiet time.Duration, done func() (bool, error)) {
	t.Helper()
	var quietSince time.Time
	last := -1
	for {
		if ctx.Err() != nil || len(procs.Unexpected()) > 0 {
			check, _ := site.CheckCrawl(site.Seeds()...)
			t.Fatalf("the crawl did not finish: %d requests at the servers, %d of %d reachable URLs fetched, missing %v; %s",
				countFetches(site), check.Reachable-len(check.Missing), check.Reachable, check.Missing, procs.Summary())
		}
		time.Sleep(250 * time.Millisecond)
		ok, err := done()
		if err != nil {
			t.Fatal(err)
		}
		n := countFetches(site)
		if !ok || n != last || n == 0 {
			last, quietSince = n, time.Time{}
			continue
		}
		if quietSince.IsZero() {
			quietSince = time.Now()
		}
		if time.Since(quietSince) > quiet {
			return
		}
	}
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

// TestGoSpiderFronteraWorkers is the other direction: Frontier's spiders (the cmd/spider binary, on
// configs/frontera-compat.yaml) under Frontera 0.8.1's own strategy workers and DB worker
// (oracle/interop/worker.py: python -m frontera.worker.strategy / frontera.worker.db with Frontera's SQLAlchemy
// backend on SQLite, BasicCrawlingStrategy). Seeds go in the Frontera 0.8 way, through a strategy worker's
// --add-seeds run. It checks that every reachable page was fetched, and fetched once for each copy of it the
// feed carried: once, unless Frontera's DB worker sent it again (see the comment at the check).
func TestGoSpiderFronteraWorkers(t *testing.T) {
	root, python, ctx := fronteraHarness(t)
	begin := time.Now()
	dir := t.TempDir()
	const spiders, strategyWorkers = 2, 2

	env := cluster.Topics(t, "fw", cluster.Partitions{SpiderLog: strategyWorkers, ScoringLog: 1, SpiderFeed: spiders})
	kcfg, kafkaAddr := env.Kafka, env.Kafka.Brokers[0]
	stats := env.Name + "-stats"
	env.CreateTopics(t, kafkabus.TopicSpec{Name: stats, Partitions: 1})

	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain, wcfg.UseIPs = 6, 15, true, true
	site := web.Start(t, wcfg)

	bin := cluster.Build(t, ctx, "./cmd/spider")

	// The Frontera workers' consumer groups are the run's own (frontera_worker_settings.py says why).
	dbwSpiderLog, dbwScoringLog, swSpiderLog := env.Name+"-dbw-spider-log", env.Name+"-dbw-scoring-log", env.Name+"-sw-spider-log"
	frEnv := []string{
		"FRONTERA_KAFKA_LOCATION=" + kafkaAddr,
		"FRONTERA_SPIDER_LOG_TOPIC=" + kcfg.SpiderLog.Topic, "FRONTERA_SPIDER_FEED_TOPIC=" + kcfg.SpiderFeed.Topic,
		"FRONTERA_SCORING_LOG_TOPIC=" + kcfg.ScoringLog.Topic, "FRONTERA_STATS_LOG_TOPIC=" + stats,
		fmt.Sprintf("FRONTERA_SPIDER_LOG_PARTITIONS=%d", strategyWorkers), fmt.Sprintf("FRONTERA_SPIDER_FEED_PARTITIONS=%d", spiders),
		"FRONTERA_SPIDER_LOG_DBW_GROUP=" + dbwSpiderLog, "FRONTERA_SCORING_LOG_DBW_GROUP=" + dbwScoringLog,
		"FRONTERA_SPIDER_LOG_SW_GROUP=" + swSpiderLog,
	}
	swEnv := append(slices.Clone(frEnv), "FRONTERA_SQLALCHEMY_ENGINE=sqlite:///"+filepath.Join(dir, "states.db"))
	dbwEnv := append(slices.Clone(frEnv), "FRONTERA_SQLALCHEMY_ENGINE=sqlite:///"+filepath.Join(dir, "dbworker.db"))
	workerPy := filepath.Join(root, "oracle", "interop", "worker.py")
	zero := func(topic, group string) []string { return []string{"--start-at-zero", topic + ":" + group} }
	procs := cluster.NewProcs(t, dir)
	procs.StrictStop = true

	// Frontera's DB worker (all three roles) and strategy workers; their groups start at offset 0.
	args := append(append(append([]string{workerPy}, zero(kcfg.ScoringLog.Topic, dbwScoringLog)...),
		zero(kcfg.SpiderLog.Topic, dbwSpiderLog)...), "--", "frontera.worker.db",
		"--config", "frontera_worker_settings", "--partitions", "0", "1")
	procs.Start("frontera-dbworker", cluster.Cmd{Path: python, Args: args, Env: dbwEnv})
	// One at a time, each started once the previous one said it is initialized, and the add-seeds run after
	// them: they share states.db, and Frontera's SQLAlchemy backend creates its tables check-then-create
	// (check_and_create_tables), so two starting together can both find no table and one fails with "table
	// states already exists" (seen under load: the add-seeds run exited 1). Python's stdout is unbuffered so
	// the line arrives when it is written.
	swEnv = append(swEnv, "PYTHONUNBUFFERED=1")
	for p := range strategyWorkers {
		args := append(append([]string{workerPy}, zero(kcfg.SpiderLog.Topic, swSpiderLog)...), "--",
			"frontera.worker.strategy", "--config", "frontera_worker_settings", "--partition-id", fmt.Sprint(p))
		name := fmt.Sprintf("frontera-strategyworker-%d", p)
		sw := procs.Start(name, cluster.Cmd{Path: python, Args: args, Env: swEnv, Ready: "[strategy-worker] Strategy worker is initialized"})
		select {
		case <-sw.Ready():
		case <-sw.Done():
			t.Fatalf("%s exited before it was initialized: %v\n%s", name, sw.Err(), sw.Tail(40))
		case <-time.After(90 * time.Second):
			t.Fatalf("%s did not say it was initialized within 90s\n%s", name, sw.Tail(40))
		}
	}
	// Frontier's spiders.
	sets := append(env.Sets(), "metrics.addr=127.0.0.1:0", "stats_interval=5s", "spider.delay=50ms", "spider.commit_interval=200ms")
	compat := filepath.Join(root, "configs", "frontera-compat.yaml")
	for p := range spiders {
		args := []string{"--config", compat, "--partition-id", fmt.Sprint(p), "--set", "spider.state_dir=" + filepath.Join(dir, fmt.Sprintf("spider-%d", p))}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		procs.Start(fmt.Sprintf("spider-%d", p), cluster.Cmd{Path: filepath.Join(bin, "spider"), Args: args})
	}

	// Seeds, Frontera 0.8's way: a strategy worker run in add-seeds mode schedules them and exits.
	seeds := cluster.SeedFile(t, site.Seeds())
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
	waitQuiet(t, ctx, procs, site, 5*time.Second, func() (bool, error) {
		fetched := site.Fetches()
		for _, u := range reachable {
			if fetched[u] == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	crawled := time.Since(seeded)
	procs.Stop()
	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Missing) > 0 || len(check.RobotsViolations) > 0 || len(check.Unserved) > 0 {
		t.Errorf("crawl of %d reachable URLs: missing %v, robots violations %v, unserved %v",
			check.Reachable, check.Missing, check.RobotsViolations, check.Unserved)
	}
	t.Logf("Frontier's spiders under Frontera's workers: %d reachable URLs, %d fetched; started in %v, crawled in %v (5 s quiet included)",
		check.Reachable, countFetches(site), seeded.Sub(begin).Round(time.Millisecond), crawled.Round(time.Millisecond))

	// Fetched once per copy on the feed. Frontera 0.8.1's DB worker can put a request on the feed twice: its
	// batch generator (a thread) and its scoring consumer (the reactor thread) share one SQLAlchemy session of
	// the queue; when the batch's commit fails under that race ("This transaction is closed"), Queue.
	// get_next_requests logs the error and still returns the batch it read, so the batch is sent and its rows,
	// never deleted, go out again in the next batch. Its subscribed consumers can also drop out of their group
	// under load (kafka-python's heartbeat_interval_ms=10000 equals its session timeout) and re-read the scoring
	// log from their last commit, queuing the same URLs again. Neither is Frontier's: Frontier's spider fetches
	// every copy the feed carries once it finished the earlier one (a copy is dropped only while the same attempt
	// still runs, spider/doc.go, "Delivery and offsets"). So the test counts the copies on the feed: a URL
	// fetched more often than the feed carried it is Frontier's bug; a URL the feed carried twice must come with
	// the DB worker's log showing one of those two causes.
	feed := feedCopies(t, ctx, env)
	dbwLog := procs.Get("frontera-dbworker").Log()
	queueErrors := strings.Count(dbwLog, "in get_next_requests")
	rejoins := max(0, strings.Count(dbwLog, "Successfully joined group "+dbwScoringLog)-1)
	var resent []string
	for u, n := range check.Twice {
		if n > len(feed[u]) {
			t.Errorf("%s: fetched %d times, on the feed %d times: Frontier's spider fetched a feed request twice", u, n, len(feed[u]))
			continue
		}
		resent = append(resent, u)
	}
	if len(resent) > 0 {
		slices.Sort(resent)
		t.Logf("%d URLs fetched as often as Frontera's DB worker put them on the feed (more than once): %v; its log shows %d failed queue commits in get_next_requests, %d scoring-log group rejoins",
			len(resent), resent, queueErrors, rejoins)
		if queueErrors+rejoins == 0 {
			t.Errorf("the feed carried %d URLs more than once, and Frontera's DB worker logged no failed queue commit nor scoring-log rejoin to explain it:\n%s",
				len(resent), cluster.Tail(dbwLog, 60))
		}
	}
}

// feedCopies reads the whole spider feed of env and returns the copies of each request, by the URL as the
// web's servers record it (web.Normalize): their timestamps in offset order (the broker's append times where
// the topic's message.timestamp.type is LogAppendTime; kafka-go's producer leaves CreateTime at zero).
func feedCopies(t *testing.T, ctx context.Context, env *cluster.Env) map[string][]time.Time {
	t.Helper()
	feed, copies, dec := env.Kafka.SpiderFeed, map[string][]time.Time{}, codec.Msgpack{}
	for p := range feed.Partitions {
		conn, err := kafka.DialLeader(ctx, "tcp", env.Kafka.Brokers[0], feed.Topic, p)
		if err != nil {
			t.Fatal(err)
		}
		end, err := conn.ReadLastOffset()
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: env.Kafka.Brokers, Topic: feed.Topic, Partition: p, MaxWait: 100 * time.Millisecond})
		for off := int64(0); off < end; {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				t.Fatalf("reading the spider feed's partition %d at offset %d of %d: %v", p, off, end, err)
			}
			off = m.Offset + 1
			req, err := dec.DecodeRequest(m.Value)
			if err != nil {
				t.Errorf("feed partition %d offset %d: %v", p, m.Offset, err)
				continue
			}
			n, err := web.Normalize("", req.URL)
			if err != nil {
				t.Errorf("feed partition %d offset %d: %s: %v", p, m.Offset, req.URL, err)
				continue
			}
			copies[n] = append(copies[n], m.Time)
		}
		r.Close()
	}
	return copies
}

// fronteraHarness returns the repository root, the oracle venv's python and the test's 3-minute context, after
// checking that Kafka is there and the venv can run the Frontera harness (skipped where it cannot, failed
// under CI=true, where deploy/test.sh builds it).
func fronteraHarness(t *testing.T) (root, python string, ctx context.Context) {
	t.Helper()
	frontiertest.Server(t, "FRONTIER_TEST_KAFKA")
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
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return root, python, ctx
}
