package standalone

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/pebblebus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/crawlstatus"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/strategy"
	"github.com/frontiercrawl/frontier/strategy/revisit"
)

func writeSeeds(t *testing.T, dir string, lines []string) string {
	t.Helper()
	p := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// depths walks the site's link graph breadth first from the seeds: URL → its depth.
func depths(site *web.Site, seeds []string) map[string]int {
	d := map[string]int{}
	frontier := seeds
	for _, s := range seeds {
		d[s] = 0
	}
	for level := 1; len(frontier) > 0; level++ {
		var next []string
		for _, u := range frontier {
			for _, l := range site.Links(u) {
				if _, ok := d[l]; !ok {
					d[l] = level
					next = append(next, l)
				}
			}
		}
		frontier = next
	}
	return d
}

// discoveryConfig is the configuration of a crawl with the discovery strategy, at most maxPages pages a host,
// by 2 spiders and 2 strategy workers, stopping once done.
func discoveryConfig(maxPages int) Config {
	cfg := DefaultConfig()
	cfg.Spiders, cfg.StrategyWorkers = 2, 2
	cfg.Spider.Delay, cfg.Spider.RequestTimeout = 5*time.Millisecond, 2*time.Second
	cfg.StopWhenDone, cfg.QuietPeriod = true, 500*time.Millisecond
	cfg.Pebble.Sync = false
	cfg.StrategyWorker.Strategy = "discovery"
	cfg.StrategyWorker.Options = map[string]any{"max_pages": maxPages}
	return cfg
}

// TestDiscoveryCrawl crawls a 12-host web from every home page with the discovery strategy and a budget of 8
// pages per domain: on every host the home page is fetched before any of its pages at depth 2 (as the host's
// request log records the order), every host is reached, and no host gets more pages than its budget.
//
// The order is checked per host because that is what the frontier decides: a host's URLs are scored by one
// strategy worker in the order they were found, queued by score and fetched by one spider in the order its
// feed gives them. Across hosts, fetch times also depend on how two spiders and their hosts are scheduled
// (a home page fetched 42 ms after another host's depth-2 page was seen once under -race on a loaded
// machine), which no frontier orders.
func TestDiscoveryCrawl(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Plain, wcfg.Hosts, wcfg.PagesPerHost, wcfg.Seed = true, 12, 20, 7
	site := web.Start(t, wcfg)
	dir := t.TempDir()
	seeds := site.Seeds()
	sort.Sort(sort.Reverse(sort.StringSlice(seeds))) // an order the crawl must not depend on
	cfg := discoveryConfig(8)
	cfg.DataDir = dir
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(t.Context(), cfg, Deps{Seeds: writeSeeds(t, dir, seeds), Identity: id, DialContext: site.DialContext,
		Logger: frontiertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	requireAccounted(t, cfg.DataDir)
	t.Logf("summary: %+v", sum)

	depth := depths(site, site.Seeds())
	deep := 0
	for _, h := range site.Hosts() {
		n := 0
		var home, firstDeep time.Time
		var deepURL string
		for _, r := range h.Requests() {
			if r.Target == "/robots.txt" {
				continue
			}
			n++
			u := h.Origin + r.Target
			if r.Target == "/" {
				home = r.Start
			}
			if depth[u] >= 2 && (firstDeep.IsZero() || r.Start.Before(firstDeep)) {
				firstDeep, deepURL = r.Start, u
			}
		}
		if n > 8 {
			t.Errorf("%s: %d pages fetched, over the budget of 8", h.Name, n)
		}
		if n < 8 {
			t.Errorf("%s: %d pages fetched, want the budget of 8 (every host has more pages)", h.Name, n)
		}
		switch {
		case home.IsZero():
			t.Errorf("%s: home page never fetched", h.Name)
		case firstDeep.IsZero():
		case !home.Before(firstDeep):
			t.Errorf("%s: home page fetched at %v, after its depth-2 page %s at %v", h.Name, home, deepURL, firstDeep)
		default:
			deep++
		}
	}
	if deep == 0 {
		t.Fatal("no host had a page at depth 2 fetched: the order was never tested")
	}
}

// changingSite is a small loopback site whose pages change on a known schedule: /static never changes,
// /always changes at every request, /etag never changes and answers If-None-Match with 304.
type changingSite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	n    map[string]int // requests answered per path
	nm   int            // 304 answers
	held bool           // see hold
}

// hold makes the site answer nothing until release: a request waits until its client gives up on it.
func (s *changingSite) hold(on bool) {
	s.mu.Lock()
	s.held = on
	s.mu.Unlock()
}

func startChangingSite(t *testing.T) *changingSite {
	s := &changingSite{n: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.held {
			s.mu.Unlock()
			<-r.Context().Done() // the spider abandoned the fetch (its crawl stopped)
			return
		}
		s.n[r.URL.Path]++
		n := s.n[r.URL.Path]
		s.mu.Unlock()
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a href="/static">s</a> <a href="/always">a</a> <a href="/etag">e</a></body></html>`)
		case "/static":
			fmt.Fprint(w, "<html><body>the same every time</body></html>")
		case "/always":
			fmt.Fprintf(w, "<html><body>version %d</body></html>", n)
		case "/etag":
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				s.mu.Lock()
				s.nm++
				s.mu.Unlock()
				w.WriteHeader(http.StatusNotModified)
				return
			}
			fmt.Fprint(w, "<html><body>tagged</body></html>")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// snapshot returns the requests per path, and the 304 answers under "304".
func (s *changingSite) snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{"304": s.nm}
	for k, v := range s.n {
		out[k] = v
	}
	return out
}

func (s *changingSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[path]
}

// TestRevisitCrawl crawls the changing site with the revisit strategy (intervals 1s to 4s, starting at 2s) and
// stops once each page was fetched four times. The intervals then have converged: the page that never changes
// is due every 4s (the maximum), the one that always changes every 1s (the minimum), and the page with an
// ETag was asked conditionally, answered 304, and counted as unchanged. The intervals are read from the
// revisit requests left in the queue (or on the spider feed), so no timing enters the assertions.
func TestRevisitCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("a crawl of about 15 seconds")
	}
	site := startChangingSite(t)
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.DataDir = dir
	cfg.Spiders, cfg.StrategyWorkers = 1, 1
	// The request timeout outlasts the test: only a request the held site keeps waiting is slow (see settle).
	cfg.Spider.Delay, cfg.Spider.RequestTimeout = 5*time.Millisecond, 10*time.Minute
	cfg.Pebble.Sync = false
	cfg.StrategyWorker.Strategy = "revisit"
	cfg.StrategyWorker.Options = map[string]any{"min_interval": "1s", "initial_interval": "2s", "max_interval": "4s"}
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, "the crawl", cfg, Deps{Seeds: writeSeeds(t, dir, []string{site.srv.URL + "/"}), Identity: id, Logger: frontiertest.Logger(t)},
		func() bool {
			return site.count("/static") >= 4 && site.count("/always") >= 4 && site.count("/etag") >= 4
		},
		func() string { return fmt.Sprintf("fetches %v", site.snapshot()) })
	// The stop can fall anywhere in a revisit's round: a page fetched just before it has its next revisit on
	// the spider log (page_crawled, not yet read by the strategy worker) or on the scoring log (update_score,
	// not yet queued). Both are kept and replayed by the next run (see the package doc); settle runs it on the
	// held site, so it fetches nothing, until both logs are consumed: every revisit is then in the queue or
	// on the spider feed.
	settle(t, cfg, id, site)

	pcfg := pebblestore.DefaultConfig()
	pcfg.Dir = filepath.Join(dir, "pebble")
	db, err := pebblestore.Open(pcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	items, err := db.Queue().Next(t.Context(), 0, 1<<40, queue.Limits{Max: 100})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := codec.New(cfg.Codec)
	interval := map[string]int64{}
	for _, it := range items {
		r, err := c.DecodeRequest(it.Request)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := r.Meta.Get(revisit.MetaKeyInterval)
		n, _ := v.(int64)
		interval[strings.TrimPrefix(r.URL, site.srv.URL)] = n
		if it.NotBefore == 0 {
			t.Errorf("%s: queued without a due time", r.URL)
		}
	}
	// A revisit that fell due just before the stop may be on its way to the spider (its batch on the spider
	// feed, its queue row acknowledged) rather than in the queue: it is scheduled all the same.
	onFeed := feedIntervals(t, db, c, site.srv.URL)
	for u, n := range onFeed {
		if _, ok := interval[u]; !ok {
			t.Logf("%s: on the spider feed (interval %d s), not in the queue", u, n)
			interval[u] = n
		}
	}
	want := map[string]int64{"/": 4, "/static": 4, "/always": 1, "/etag": 4}
	if fmt.Sprint(interval) != fmt.Sprint(want) {
		t.Errorf("revisit intervals (s) %v, want %v; fetches %v", interval, want, site.snapshot())
	}
	if site.snapshot()["304"] == 0 {
		t.Error("/etag never answered 304: the conditional request was not sent")
	}
	// The end-of-crawl invariant on a crawl stopped mid-way: what is on the spider feed is in flight, not stranded.
	var inFlight []frontier.Fingerprint
	for u := range onFeed {
		fp, err := id.Fingerprint(site.srv.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		inFlight = append(inFlight, fp)
	}
	frontiertest.RequireAccounted(t, frontiertest.AccountingStores{States: db.RawStates(), Queue: db.Queue(), Pages: db.Pages(), InFlight: inFlight})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart without seeds resumes the revisits from the queue.
	site.hold(false)
	before := site.count("/always")
	runUntil(t, "the resumed crawl", cfg, Deps{Identity: id, Logger: frontiertest.Logger(t)},
		func() bool { return site.count("/always") >= before+2 },
		func() string { return fmt.Sprintf("revisited nothing: fetches %v", site.snapshot()) })
}

// oneAtATimeConfig is the configuration of a crawl that hands the spider one URL at a time (so the queue's
// order is the fetch order) and stops once done.
func oneAtATimeConfig() Config {
	cfg := DefaultConfig()
	cfg.Spider.Delay, cfg.Spider.RequestTimeout = time.Millisecond, 2*time.Second
	cfg.DBWorker.FeedBatch, cfg.DBWorker.PerHost, cfg.DBWorker.MaxLag = 1, 1, 1
	cfg.StopWhenDone, cfg.QuietPeriod = true, 500*time.Millisecond
	cfg.Pebble.Sync = false
	return cfg
}

// orderCrawl crawls a one-host web with the named strategy, one URL handed to the spider at a time (so the
// queue's order is the fetch order), and returns the depth of each page in the order the server saw them.
func orderCrawl(t *testing.T, name string, opts map[string]any) []int {
	t.Helper()
	wcfg := web.DefaultConfig()
	wcfg.Plain, wcfg.Hosts, wcfg.PagesPerHost, wcfg.LinksPerPage, wcfg.CrossHostLinks, wcfg.Seed = true, 1, 40, 3, 0, 3
	site := web.Start(t, wcfg)
	cfg := oneAtATimeConfig()
	cfg.StrategyWorker.Strategy, cfg.StrategyWorker.Options = name, opts
	deps := siteDeps(t, site, &cfg)
	if _, err := Run(t.Context(), cfg, deps); err != nil {
		t.Fatal(err)
	}
	requireAccounted(t, cfg.DataDir)
	depth := depths(site, site.Seeds())
	var out []int
	h := site.Hosts()[0]
	for _, r := range h.Requests() {
		if r.Target != "/robots.txt" {
			out = append(out, depth[h.Origin+r.Target])
		}
	}
	return out
}

// TestStrategyOrders crawls one web with bfs, dfs, basic and discovery and compares the orders the server
// saw: bfs and discovery never fetch a page more than one level above the deepest fetched so far
// (breadth first, up to the pages in flight), dfs goes deep at once, and all fetch the same pages.
func TestStrategyOrders(t *testing.T) {
	deepestAfter := func(ds []int, n int) int {
		m := 0
		for _, d := range ds[:min(n, len(ds))] {
			m = max(m, d)
		}
		return m
	}
	orders := map[string][]int{}
	for _, name := range []string{"bfs", "dfs", "basic", "discovery"} {
		orders[name] = orderCrawl(t, name, map[string]any{"seed_scores": true})
		t.Logf("%-9s depths in fetch order: %v", name, orders[name])
	}
	for _, name := range []string{"bfs", "discovery"} {
		ds := orders[name]
		for i := range ds {
			if i > 0 && ds[i] < deepestAfter(ds, i)-1 {
				t.Errorf("%s: fetch %d at depth %d after the crawl reached depth %d: %v", name, i, ds[i], deepestAfter(ds, i), ds)
				break
			}
		}
	}
	if b, d := deepestAfter(orders["bfs"], 10), deepestAfter(orders["dfs"], 10); d <= b {
		t.Errorf("after 10 fetches dfs reached depth %d and bfs %d: dfs should be deeper", d, b)
	}
	for name, ds := range orders {
		if len(ds) != len(orders["bfs"]) {
			t.Errorf("%s fetched %d pages, bfs %d", name, len(ds), len(orders["bfs"]))
		}
	}
}

// TestBudgetsOfEveryStrategy: the common options apply to a strategy that knows nothing of them (bfs here): a
// per-domain budget of 10 pages and a host budget of 4 (besides the seed), with host1.test's own host budget
// raised to 9 (host1 and its subdomains www and blog share the domain host1.test, which stays at 10 in all).
func TestBudgetsOfEveryStrategy(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 5, 20
	wcfg.CrawlDelay, wcfg.SlowDelay, wcfg.LargeBytes = 50*time.Millisecond, 50*time.Millisecond, 1<<20
	site := web.Start(t, wcfg)
	cfg := DefaultConfig()
	cfg.Spiders, cfg.StrategyWorkers = 2, 2
	cfg.Spider.Delay, cfg.Spider.RequestTimeout, cfg.Spider.MaxBodyBytes = 5*time.Millisecond, time.Second, 1<<20
	cfg.StopWhenDone, cfg.QuietPeriod = true, 500*time.Millisecond
	cfg.Pebble.Sync = false
	cfg.StrategyWorker.Strategy = "bfs"
	cfg.StrategyWorker.Options = map[string]any{"domain_budget": 10, "host_budget": 4, "host_budgets": map[string]any{"host1.test": 9}}
	deps := siteDeps(t, site, &cfg)
	if _, err := Run(t.Context(), cfg, deps); err != nil {
		t.Fatal(err)
	}
	requireAccounted(t, cfg.DataDir)
	byDomain, byHost := map[string]int{}, map[string]int{}
	for _, h := range append(site.Hosts(), site.Special()...) {
		n := 0
		for _, r := range h.Requests() {
			if r.Target != "/robots.txt" {
				n++
			}
		}
		byDomain[strategy.Domain(h.Name)] += n
		byHost[h.Name] = n
		// A host budget counts the URLs scheduled besides the seeds (one home page per content host).
		if limit := map[bool]int{true: 9, false: 4}[h.Name == "host1.test"]; n > limit+1 {
			t.Errorf("%s: %d requests, over its host budget of %d and its seed", h.Name, n, limit)
		}
	}
	for d, n := range byDomain {
		if n > 10 {
			t.Errorf("domain %s: %d requests, over the domain budget of 10", d, n)
		}
	}
	// A budget counts URLs scheduled; a few of them (robots-disallowed) never reach the server.
	if byHost["host1.test"] <= 5 || byHost["host4.test"] < 4 {
		t.Errorf("requests by host %v: want host1.test past the plain host budget (its own is 9) and host4.test near its 4 + seed", byHost)
	}
}

// TestHostPriority: two hosts crawled breadth first, one URL at a time; host2.test's scores are multiplied by
// 0.25, so host1.test's pages come first on the whole (the mean position of its fetches is earlier).
func TestHostPriority(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Plain, wcfg.Hosts, wcfg.PagesPerHost, wcfg.LinksPerPage, wcfg.CrossHostLinks, wcfg.Seed = true, 2, 15, 3, 0, 5
	site := web.Start(t, wcfg)
	cfg := oneAtATimeConfig()
	cfg.StrategyWorker.Options = map[string]any{"host_priority": map[string]any{"host2.test": 0.25}}
	deps := siteDeps(t, site, &cfg)
	if _, err := Run(t.Context(), cfg, deps); err != nil {
		t.Fatal(err)
	}
	requireAccounted(t, cfg.DataDir)
	type fetch struct {
		host string
		at   time.Time
	}
	var all []fetch
	for _, h := range site.Hosts() {
		for _, r := range h.Requests() {
			if r.Target != "/robots.txt" {
				all = append(all, fetch{h.Name, r.Start})
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	sum, n := map[string]int{}, map[string]int{}
	var order []string
	for i, f := range all {
		sum[f.host] += i
		n[f.host]++
		order = append(order, strings.TrimSuffix(f.host, ".test"))
	}
	if n["host1.test"] != 15 || n["host2.test"] != 15 {
		t.Fatalf("fetches per host %v, want 15 each", n)
	}
	m1, m2 := float64(sum["host1.test"])/15, float64(sum["host2.test"])/15
	t.Logf("mean fetch position: host1 %.1f, host2 %.1f; order %v", m1, m2, order)
	if m1 >= m2-5 {
		t.Errorf("mean fetch position host1 %.1f, host2 %.1f: host2's lower priority should put it well behind; order %v", m1, m2, order)
	}
}

// TestDiscoveryRevealsDomains seeds three of ten hosts and lets the scope follow links anywhere: discovery
// reaches the other hosts through cross-host links, fetches each revealed host's home page before any other
// page of it, and keeps every host within its budget.
func TestDiscoveryRevealsDomains(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Plain, wcfg.Hosts, wcfg.PagesPerHost, wcfg.CrossHostLinks, wcfg.Seed = true, 10, 20, 0.3, 11
	site := web.Start(t, wcfg)
	dir := t.TempDir()
	cfg := discoveryConfig(6)
	cfg.DataDir = dir
	cfg.StrategyWorker.Scope.Follow = "any"
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(t.Context(), cfg, Deps{Seeds: writeSeeds(t, dir, site.Seeds()[:3]), Identity: id, DialContext: site.DialContext,
		Logger: frontiertest.Logger(t)}); err != nil {
		t.Fatal(err)
	}
	requireAccounted(t, cfg.DataDir)
	reached := 0
	for _, h := range site.Hosts() {
		var targets []string
		for _, r := range h.Requests() {
			if r.Target != "/robots.txt" {
				targets = append(targets, r.Target)
			}
		}
		if len(targets) == 0 {
			continue
		}
		reached++
		if targets[0] != "/" {
			t.Errorf("%s: first fetch %s, want its home page first; fetches %v", h.Name, targets[0], targets)
		}
		if len(targets) > 6 {
			t.Errorf("%s: %d pages, over the budget of 6", h.Name, len(targets))
		}
	}
	if reached != 10 {
		t.Errorf("%d of 10 hosts reached from 3 seeds", reached)
	}
}

// settle resumes the stopped crawl of cfg with the site held, so that no fetch completes and nothing new
// enters the spider log, until the spider log and the scoring log are consumed and committed by every group
// in two status snapshots in a row (the second snapshot's scoring-log lag is read after the first's spider-log
// lag was zero, whatever the order within a snapshot), and stops it. The site stays held.
func settle(t *testing.T, cfg Config, id Identity, site *changingSite) {
	t.Helper()
	site.hold(true)
	// Two statuses in a row without lag on either log; a status with lag starts the count again.
	var mu sync.Mutex
	quiet := 0
	progress := func(s crawlstatus.Status) {
		mu.Lock()
		defer mu.Unlock()
		quiet++
		for _, l := range s.Lags {
			if (l.Stream == string(bus.SpiderLog) || l.Stream == string(bus.ScoringLog)) && l.Lag > 0 {
				quiet = 0
			}
		}
	}
	runUntil(t, "the settling run", cfg, Deps{Identity: id, Logger: frontiertest.Logger(t), Progress: progress},
		func() bool { mu.Lock(); defer mu.Unlock(); return quiet >= 2 },
		func() string { return "the spider log and the scoring log were not consumed" })
}

// runUntil runs the standalone with cfg and deps until ready holds (checked every 100 ms), then stops it and
// requires a clean stop. A run that ends by itself first fails the test, and so does one that is not ready
// within 2 minutes (a bound on a stuck crawl, not a timing assertion; state says where it stands). what names
// the run in the failures.
func runUntil(t *testing.T, what string, cfg Config, deps Deps, ready func() bool, state func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg, deps)
		done <- err
	}()
	deadline := time.After(2 * time.Minute)
	for !ready() {
		select {
		case err := <-done:
			t.Fatalf("%s ended early: %v", what, err)
		case <-deadline:
			t.Fatalf("%s, after 2 minutes: %s", what, state())
		case <-time.After(100 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// feedIntervals returns the revisit interval of each request still on the spider feed of a stopped standalone
// crawl (one spider) whose store is db, keyed by the URL less prefix.
func feedIntervals(t *testing.T, db *pebblestore.DB, c codec.Codec, prefix string) map[string]int64 {
	t.Helper()
	bcfg := pebblebus.DefaultConfig()
	bcfg.Partitions = map[bus.Stream]int{bus.SpiderLog: 1, bus.ScoringLog: 1, bus.SpiderFeed: 1}
	b, err := pebblebus.Open(db.Pebble(), bcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lags, err := b.Lag(t.Context(), bus.SpiderFeed, bus.GroupSpiderFeed)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	if lags[0] == 0 {
		return out
	}
	feed, err := b.Consumer(t.Context(), bus.SpiderFeed, bus.GroupSpiderFeed, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	msgs, err := feed.Fetch(t.Context(), int(lags[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		r, err := c.DecodeRequest(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := r.Meta.Get(revisit.MetaKeyInterval)
		n, _ := v.(int64)
		out[strings.TrimPrefix(r.URL, prefix)] = n
	}
	return out
}
