package spider

import (
	"context"
	"crypto/tls"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/google/go-cmp/cmp"

	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// testConfig is a fast spider: short delay and timeouts, state in a temporary directory.
func testConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.Delay = 50 * time.Millisecond
	cfg.ConnectTimeout = time.Second
	cfg.RequestTimeout = 2 * time.Second
	cfg.MaxBodyBytes = 1 << 20
	cfg.CommitInterval = 20 * time.Millisecond
	cfg.StatsInterval = time.Second
	cfg.HonourNoFollow = true
	cfg.StateDir = t.TempDir()
	return cfg
}

type harness struct {
	t      *testing.T
	codec  *fakeCodec
	feed   *fakeFeed
	log    *fakeLog
	deps   Deps
	mu     sync.Mutex
	bodies map[string]int // final URL → handler body length
}

func newHarness(t *testing.T, site *web.Site, urls []string) *harness {
	h := &harness{t: t, codec: &fakeCodec{}, feed: newFeed(urls...), bodies: map[string]int{}}
	h.log = newLog(h.codec)
	h.deps = Deps{
		Log: h.log, Codec: h.codec, Logger: frontiertest.Logger(t), Registerer: prometheus.NewRegistry(),
		Handler: HandlerFunc(func(_ context.Context, f *Fetched) error {
			h.mu.Lock()
			h.bodies[f.URL] = len(f.Body)
			h.mu.Unlock()
			return nil
		}),
	}
	if site != nil {
		h.deps.DialContext = site.DialContext
	}
	return h
}

// start runs a spider on a new consumer of the feed; stop cancels it and waits for Run.
func (h *harness) start(cfg Config) (stop func()) {
	deps := h.deps
	deps.Feed = h.feed.consumer()
	deps.Registerer = prometheus.NewRegistry()
	s, err := New(cfg, deps)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("Run: %v", err)
		}
	}
}

// waitOutcomes waits until every url has an outcome on the log (or the test's deadline guard fires).
func (h *harness) waitOutcomes(urls []string) map[string]frontier.Message {
	h.t.Helper()
	guard := time.After(2 * time.Minute) // a hang guard, not a timing assertion
	for {
		got := outcomes(h.log.records())
		missing := 0
		for _, u := range urls {
			if _, ok := got[u]; !ok {
				missing++
			}
		}
		if missing == 0 {
			return got
		}
		select {
		case <-guard:
			h.t.Fatalf("%d of %d URLs have no outcome", missing, len(urls))
		case <-h.log.sent:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func norm(t *testing.T, u string) string {
	n, err := web.Normalize("", u)
	if err != nil {
		t.Fatalf("web.Normalize(%q): %v", u, err)
	}
	return n
}

func TestCrawlSyntheticSite(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 4, 12
	wcfg.CrawlDelay = 300 * time.Millisecond
	wcfg.SlowDelay = 300 * time.Millisecond
	site := web.Start(t, wcfg)
	var urls []string
	pages := map[string]*web.Page{}
	for _, p := range site.Pages() {
		urls = append(urls, p.URL)
		pages[p.URL] = p
	}
	h := newHarness(t, site, urls)
	cfg := testConfig(t)
	stop := h.start(cfg)
	got := h.waitOutcomes(urls)
	stop()
	recs := h.log.records()

	linksOf := map[string][]string{} // page URL → normalised link URLs
	leKeys := map[string]bool{}
	for _, r := range recs {
		if le, ok := r.msg.(*frontier.LinksExtracted); ok {
			hostKey := ""
			for _, l := range le.Links {
				linksOf[le.Request.URL] = append(linksOf[le.Request.URL], norm(t, l.URL))
				d, _ := l.MetaDomain()
				if hostKey == "" {
					hostKey = d.Fingerprint
				}
				if d.Fingerprint != hostKey || r.key != hostKey {
					t.Errorf("links_extracted of %s mixes hosts or is mis-keyed: key %s, link %s domain %s", le.Request.URL, r.key, l.URL, d.Fingerprint)
				}
			}
			leKeys[le.Request.URL+" "+hostKey] = true
		}
	}

	for _, u := range urls {
		p := pages[u]
		o := got[u]
		switch p.Outcome {
		case web.OK, web.HTTPError, web.Large:
			pc, ok := o.(*frontier.PageCrawled)
			if !ok {
				t.Errorf("%s (%s): got %T %v, want page_crawled", u, p.Outcome, o, o)
				continue
			}
			if pc.Response.Status != p.Status {
				t.Errorf("%s: status %d, want %d", u, pc.Response.Status, p.Status)
			}
			_, truncated := pc.Response.Request.Meta.Get(MetaKeyTruncated)
			if want := p.Outcome == web.Large; truncated != want {
				t.Errorf("%s: truncated = %v, want %v", u, truncated, want)
			}
			if p.Outcome == web.Large {
				h.mu.Lock()
				n := h.bodies[u]
				h.mu.Unlock()
				if n != int(cfg.MaxBodyBytes) {
					t.Errorf("%s: handler body %d bytes, want the limit %d", u, n, cfg.MaxBodyBytes)
				}
			}
			if p.Outcome == web.OK {
				want := slices.Clone(p.Links)
				gotLinks := linksOf[u]
				slices.Sort(want)
				slices.Sort(gotLinks)
				gotLinks = slices.Compact(gotLinks)
				if !slices.Equal(want, gotLinks) {
					t.Errorf("%s (%s): links\n got %q\nwant %q", u, p.ContentType, gotLinks, want)
				}
			}
		case web.Redirect:
			// The spider does not follow: it reports the 3xx and the target as a link for the frontier to decide.
			pc, ok := o.(*frontier.PageCrawled)
			if !ok || pc.Response.Status != p.Status {
				t.Errorf("%s (redirect): got %T %v, want page_crawled with status %d", u, o, o, p.Status)
				continue
			}
			if got := linksOf[u]; len(got) != 1 || got[0] != p.Location {
				t.Errorf("%s: redirect target reported as links %v, want [%s]", u, got, p.Location)
			}
		case web.RobotsDisallowed:
			re, ok := o.(*frontier.RequestError)
			if !ok || (re.Error != ErrNameRobots && re.Error != ErrNameRobotsUnavail) {
				t.Errorf("%s: got %v, want RobotsDisallowed/RobotsUnavailable", u, o)
			}
		case web.NoResponse, web.DNSError, web.Refused:
			want := map[web.Outcome]string{web.NoResponse: ErrNameTimeout, web.DNSError: ErrNameDNS, web.Refused: ErrNameConnRefused}[p.Outcome]
			re, ok := o.(*frontier.RequestError)
			if !ok || re.Error != want {
				t.Errorf("%s: got %v, want request_error %s", u, o, want)
			}
		}
	}

	// Server-side facts.
	disallowed := map[string]bool{}
	for _, p := range site.Pages() {
		if p.Outcome == web.RobotsDisallowed {
			disallowed[p.URL] = true
		}
	}
	for _, host := range slices.Concat(site.Hosts(), site.Special()) {
		reqs := host.Requests()
		if len(reqs) == 0 {
			continue
		}
		if reqs[0].Target != "/robots.txt" {
			t.Errorf("%s: first request %s, want /robots.txt", host.Name, reqs[0].Target)
		}
		for _, r := range reqs {
			if disallowed[host.Origin+r.Target] {
				t.Errorf("%s: fetched %s, which robots.txt disallows", host.Name, r.Target)
			}
		}
		if n := host.MaxInFlight(); n > cfg.ConnsPerHost {
			t.Errorf("%s: %d requests at once, want <= %d", host.Name, n, cfg.ConnsPerHost)
		}
		if n := host.MaxConns(); n > cfg.ConnsPerHost {
			t.Errorf("%s: %d connections at once, want <= %d", host.Name, n, cfg.ConnsPerHost)
		}
		want := cfg.Delay
		if host.Robots == web.RobotsCrawlDelay {
			want = wcfg.CrawlDelay
		}
		if gap, ok := host.MinGap(nil); ok && gap < want {
			t.Errorf("%s: two requests %v apart, want >= %v", host.Name, gap, want)
		}
	}

	// A cross-host redirect is reported to the target host's owner too, keyed by its domain fingerprint.
	var cross *web.Page
	for _, p := range site.Pages() {
		if p.Outcome == web.Redirect && strings.HasSuffix(p.URL, "/r/cross") {
			cross = p
		}
	}
	if cross == nil {
		t.Fatal("the site has no /r/cross")
	}
	target, _ := url.Parse(cross.Location)
	wantKey := SimpleIdentity{}.Domain(target).Fingerprint
	found := false
	for _, r := range recs {
		le, ok := r.msg.(*frontier.LinksExtracted)
		if !ok || le.Request.URL != cross.URL || len(le.Links) != 1 || r.key != wantKey {
			continue
		}
		l := le.Links[0]
		chain, _ := l.Meta.Get(MetaKeyRedirectURLs)
		times, _ := l.Meta.Get(MetaKeyRedirectTimes)
		reasons, _ := l.Meta.Get(MetaKeyRedirectReasons)
		if norm(t, l.URL) == cross.Location && cmp.Equal(chain, []frontier.Value{cross.URL}) && times == int64(1) &&
			cmp.Equal(reasons, []frontier.Value{int64(cross.Status)}) {
			found = true
		}
	}
	if !found {
		t.Errorf("the redirect %s → %s was not reported as a link to %s's owner (key %s) with its chain", cross.URL, cross.Location, target.Host, wantKey)
	}

	// PDFs (declared or sniffed) are fetched but not parsed for links.
	for _, u := range urls {
		if strings.HasSuffix(u, ".pdf") || strings.HasSuffix(u, "/sniff/doc") {
			if _, ok := got[u].(*frontier.PageCrawled); !ok {
				t.Errorf("%s: got %v, want page_crawled", u, got[u])
			}
			for k := range leKeys {
				if strings.HasPrefix(k, u+" ") {
					t.Errorf("%s: links extracted from a PDF", u)
				}
			}
		}
	}

	// The host that never answers did not stall the others: pages of other hosts were reported before its
	// timeout was.
	before := 0
	for _, r := range recs {
		if re, ok := r.msg.(*frontier.RequestError); ok && strings.Contains(re.Request.URL, web.BlackholeHost) {
			break
		}
		if pc, ok := r.msg.(*frontier.PageCrawled); ok && !strings.Contains(pc.Response.URL, web.BlackholeHost) {
			before++
		}
	}
	if before == 0 {
		t.Error("no other host's page was reported before the hanging host timed out")
	}
	t.Logf("%d pages of other hosts reported while %s hung", before, web.BlackholeHost)

	// The feed is committed to the end.
	if c := h.feed.Committed(); c != int64(len(urls)) {
		t.Errorf("committed %d, want %d", c, len(urls))
	}
}

// TestCrawlOverTLSAndHTTP2 crawls the synthetic web served over HTTPS: every page comes over HTTP/2 (ALPN),
// on one connection per host.
func TestCrawlOverTLSAndHTTP2(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Plain, wcfg.TLS = true, true
	wcfg.Hosts, wcfg.PagesPerHost = 3, 10
	site := web.Start(t, wcfg)
	var urls []string
	for _, p := range site.Pages() {
		urls = append(urls, p.URL)
	}
	h := newHarness(t, site, urls)
	var mu sync.Mutex
	protos := map[string]int{}
	h.deps.TLSConfig = &tls.Config{RootCAs: site.CertPool()}
	h.deps.Handler = HandlerFunc(func(_ context.Context, f *Fetched) error {
		mu.Lock()
		protos[f.Proto]++
		mu.Unlock()
		return nil
	})
	cfg := testConfig(t)
	stop := h.start(cfg)
	got := h.waitOutcomes(urls)
	stop()
	for _, u := range urls {
		if pc, ok := got[u].(*frontier.PageCrawled); !ok || pc.Response.Status != 200 {
			t.Errorf("%s: %v", u, got[u])
		}
	}
	if protos["HTTP/2.0"] != len(urls) {
		t.Errorf("protocols %v, want HTTP/2.0 for all %d pages", protos, len(urls))
	}
	for _, host := range site.Hosts() {
		if n := host.MaxConns(); n > 1 {
			t.Errorf("%s: %d connections at once", host.Name, n)
		}
	}
}
