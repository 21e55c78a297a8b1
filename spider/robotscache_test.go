package spider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/spider/robots"
)

// TestRobotsFailures: a robots.txt that keeps failing closes the host, fetched again on a doubling back-off
// capped at the TTL; after giveUp of failures in a row it is treated as absent; an answer ends the run, and an
// entry replacing an expired one carries the run on (robotsCache.get).
func TestRobotsFailures(t *testing.T) {
	const errTTL, ttl, giveUp = 10 * time.Minute, 24 * time.Hour, 30 * 24 * time.Hour
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	e := &robotsEntry{}
	now := t0
	for i, want := range []time.Duration{10 * time.Minute, 20 * time.Minute, 40 * time.Minute, 80 * time.Minute,
		160 * time.Minute, 320 * time.Minute, 640 * time.Minute, 1280 * time.Minute, 24 * time.Hour, 24 * time.Hour} {
		if e.fail(now, errTTL, ttl, giveUp) {
			t.Fatalf("failure %d gave up", i+1)
		}
		if got := e.expires.Sub(now); got != want || e.rules != robots.DisallowAll {
			t.Fatalf("failure %d: fetched again after %v (want %v), rules %p (want disallow all)", i+1, got, want, e.rules)
		}
		now = e.expires
	}
	if !e.fail(t0.Add(giveUp), errTTL, ttl, giveUp) || e.rules != robots.AllowAll || e.err != nil {
		t.Fatalf("30 days of failures: rules %p, err %v, want allow all", e.rules, e.err)
	}
	if got := e.expires.Sub(t0.Add(giveUp)); got != ttl {
		t.Errorf("after giving up, fetched again after %v, want %v", got, ttl)
	}
	e.succeed()
	if e.fail(t0.Add(giveUp+time.Hour), errTTL, ttl, giveUp) || e.expires.Sub(t0.Add(giveUp+time.Hour)) != errTTL {
		t.Errorf("a failure after an answer starts a new run: expires %v", e.expires)
	}
	if e := (&robotsEntry{}); e.fail(t0, errTTL, ttl, 0) || !(&robotsEntry{failures: 100, failSince: t0}).fail(t0.Add(giveUp), errTTL, ttl, giveUp) {
		t.Error("giveUp 0 must never give up; a long run must")
	}

	c := newRobotsCache(4)
	old, fetch := c.get("http://a.test")
	if !fetch {
		t.Fatal("first get: want fetch")
	}
	old.fail(time.Now().Add(-time.Hour), time.Millisecond, time.Millisecond, giveUp)
	c.publish("http://a.test", old)
	e, fetch = c.get("http://a.test")
	if !fetch || e == old || e.failures != 1 || !e.failSince.Equal(old.failSince) {
		t.Errorf("after expiry: fetch %v, failures %d since %v; want a new entry carrying 1 failure since %v", fetch, e.failures, e.failSince, old.failSince)
	}
}

// robotsServer serves /robots.txt through redirects hops redirects (hops 0: directly) with body, and every
// other path as a small page.
func robotsServer(t *testing.T, hops int, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt" && hops > 0:
			http.Redirect(w, r, "/r/1", http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, "/r/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
			if n < hops {
				http.Redirect(w, r, fmt.Sprintf("/r/%d", n+1), http.StatusFound)
				return
			}
			fmt.Fprint(w, body)
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, body)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>page</body></html>")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRobotsToTheLetter: robots.txt reached through 5 redirects is obeyed, through 6 it is unavailable (allow
// all); only the first 500 KiB are parsed; every page fetched carries the verdict it was allowed by.
func TestRobotsToTheLetter(t *testing.T) {
	rules := "User-agent: *\nDisallow: /early\n"
	late := rules + "# " + strings.Repeat("x", robots.MaxSize) + "\nDisallow: /late\n"
	for _, tc := range []struct {
		name        string
		hops        int
		body        string
		allowed     []string
		disallowed  []string
		labelPrefix string
	}{
		{"direct", 0, rules, []string{"/page"}, []string{"/early"}, "200 sha1:"},
		{"5 redirects", 5, rules, []string{"/page"}, []string{"/early"}, "200 sha1:"},
		{"6 redirects", 6, rules, []string{"/page", "/early"}, nil, "0 allow-all "},
		{"past 500 KiB", 0, late, []string{"/page", "/late"}, []string{"/early"}, "200 sha1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := robotsServer(t, tc.hops, tc.body)
			var urls []string
			for _, p := range append(append([]string{}, tc.allowed...), tc.disallowed...) {
				urls = append(urls, srv.URL+p)
			}
			h := newHarness(t, nil, urls)
			cfg := testConfig(t)
			cfg.Delay = time.Millisecond
			stop := h.start(cfg)
			got := h.waitOutcomes(urls)
			stop()
			for _, p := range tc.allowed {
				pc, ok := got[srv.URL+p].(*frontier.PageCrawled)
				if !ok {
					t.Errorf("%s: %v, want page_crawled", p, got[srv.URL+p])
					continue
				}
				label, _ := pc.Response.Request.Meta.Get(MetaKeyRobots)
				if s, _ := label.(string); !strings.HasPrefix(s, tc.labelPrefix) {
					t.Errorf("%s: meta %s = %v, want %q…", p, MetaKeyRobots, label, tc.labelPrefix)
				}
			}
			for _, p := range tc.disallowed {
				re, ok := got[srv.URL+p].(*frontier.RequestError)
				if !ok || re.Error != ErrNameRobots {
					t.Errorf("%s: %v, want request_error %s", p, got[srv.URL+p], ErrNameRobots)
				}
			}
		})
	}
}

// TestRobotsRecordedOnSite: on the synthetic web, pages of a host with rules carry the rules' digest, pages of
// a host whose robots.txt is missing (404) carry allow-all.
func TestRobotsRecordedOnSite(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost = 4, 3
	site := web.Start(t, wcfg)
	hosts := site.Hosts()
	urls := []string{hosts[0].Origin + "/", hosts[3].Origin + "/"} // host4.test: robots.txt 404
	h := newHarness(t, site, urls)
	stop := h.start(testConfig(t))
	got := h.waitOutcomes(urls)
	stop()
	for i, want := range []string{"200 sha1:", "404 allow-all "} {
		pc, ok := got[urls[i]].(*frontier.PageCrawled)
		if !ok {
			t.Fatalf("%s: %v, want page_crawled", urls[i], got[urls[i]])
		}
		label, _ := pc.Response.Request.Meta.Get(MetaKeyRobots)
		if s, _ := label.(string); !strings.HasPrefix(s, want) {
			t.Errorf("%s: meta %s = %v, want %q…", urls[i], MetaKeyRobots, label, want)
		}
	}
}

// TestSendSitemaps: sitemaps go out as add_seeds keyed by their domain, marked with MetaKeySitemap 1 and the
// owner when robots.txt listed them.
func TestSendSitemaps(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.deps.Feed = h.feed.consumer()
	s, err := New(testConfig(t), h.deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.sendSitemaps(t.Context(), []string{"http://a.test/sitemap.xml", "http://b.test/s.xml.gz"}, "a.test"); err != nil {
		t.Fatal(err)
	}
	if err := s.sendSitemaps(t.Context(), []string{"sitemap.xml"}, ""); err == nil {
		t.Error("a relative sitemap URL was sent")
	}
	var got []string
	for _, r := range h.log.records() {
		as, ok := r.msg.(*frontier.AddSeeds)
		if !ok {
			t.Fatalf("unexpected %T", r.msg)
		}
		for _, sd := range as.Seeds {
			d, _ := sd.MetaDomain()
			if d.Fingerprint != r.key || sitemapDepth(sd) != 1 || metaString(sd.Meta, MetaKeySitemapOwner) != "a.test" {
				t.Errorf("seed %s: key %s, depth %d, owner %q", sd.URL, r.key, sitemapDepth(sd), metaString(sd.Meta, MetaKeySitemapOwner))
			}
			got = append(got, sd.URL)
		}
	}
	if strings.Join(got, " ") != "http://a.test/sitemap.xml http://b.test/s.xml.gz" {
		t.Errorf("sent %v", got)
	}
}
