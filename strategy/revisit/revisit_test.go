package revisit

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
	"github.com/frontiercrawl/frontier/strategy/strategytest"
)

func opts() Options {
	return Options{Initial: 4 * time.Hour, Min: time.Hour, Max: 64 * time.Hour, Grow: 2, Shrink: 0.5, RevisitScore: 0.75}
}

func TestNext(t *testing.T) {
	s, err := New(opts())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prev    time.Duration
		changed bool
		want    time.Duration
	}{
		{0, false, 4 * time.Hour},
		{0, true, 4 * time.Hour},
		{4 * time.Hour, false, 8 * time.Hour},
		{4 * time.Hour, true, 2 * time.Hour},
		{time.Hour, true, time.Hour},            // floor
		{64 * time.Hour, false, 64 * time.Hour}, // ceiling
		{90 * time.Minute, true, time.Hour},
		{50 * time.Hour, false, 64 * time.Hour},
	} {
		if got := s.Next(tc.prev, tc.changed); got != tc.want {
			t.Errorf("Next(%v, %v) = %v, want %v", tc.prev, tc.changed, got, tc.want)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]any
		ok   bool
	}{
		{nil, true},
		{map[string]any{"min_interval": "1s", "initial_interval": "2s", "max_interval": "8s"}, true},
		{map[string]any{"min_interval": "2h", "max_interval": "1h"}, false},
		{map[string]any{"grow": 1}, false},
		{map[string]any{"shrink": 1.5}, false},
		{map[string]any{"revisit_score": 2}, false},
		{map[string]any{"interval": "1h"}, false},
		{map[string]any{"host_budget": 3, "max_depth": 2}, true},
	} {
		_, err := strategy.New("revisit", tc.opts)
		if (err == nil) != tc.ok {
			t.Errorf("options %v: err = %v, want ok = %v", tc.opts, err, tc.ok)
		}
	}
}

func digest(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// fetch feeds the strategy one fetch of r answered with status, body (digest) and headers, and returns the
// request it scheduled next.
func fetch(t *testing.T, s *Strategy, c *strategytest.Context, r *frontier.Request, status int, body string, hdr frontier.Headers) *frontier.Request {
	t.Helper()
	page := &frontier.Request{URL: r.URL, Method: r.Method, Headers: r.Headers, Meta: r.Meta.Clone()}
	if status == 200 {
		page.SetMetaDigest(digest(body))
	}
	n := len(c.Requests)
	s.PageCrawled(c, &frontier.Response{URL: r.URL, Status: status, Headers: hdr, Request: page})
	if len(c.Requests) != n+1 {
		t.Fatalf("%s: %d requests scheduled, want 1", r.URL, len(c.Requests)-n)
	}
	return c.Requests[n]
}

func TestPageCrawled(t *testing.T) {
	s, _ := New(opts())
	c := strategytest.New(nil)
	c.Clock = time.Unix(1_000_000, 0)
	r := &frontier.Request{URL: "http://a/p", Method: "GET"}
	r.SetMetaDepth(1)
	r.Meta.Set("redirect_urls", []frontier.Value{"http://a/x"})
	etag := frontier.Headers{{Name: []byte("ETag"), Values: [][]byte{[]byte(`"v1"`)}},
		{Name: []byte("Last-Modified"), Values: [][]byte{[]byte("Mon, 02 Jan 2006 15:04:05 GMT")}}}

	type step struct {
		status       int
		body         string
		hdr          frontier.Headers
		wantInterval time.Duration
	}
	steps := []step{
		{200, "a", etag, 4 * time.Hour},  // first fetch: initial
		{200, "a", etag, 8 * time.Hour},  // same digest: grows
		{304, "", nil, 16 * time.Hour},   // not modified: grows, validators kept
		{200, "b", nil, 8 * time.Hour},   // changed: shrinks
		{500, "", nil, 16 * time.Hour},   // an error status: nothing learned, grows
		{200, "b", nil, 32 * time.Hour},  // the digest of before the error: unchanged
		{200, "c", etag, 16 * time.Hour}, // changed
	}
	for i, st := range steps {
		next := fetch(t, s, c, r, st.status, st.body, st.hdr)
		got := c.Scheduled[len(c.Scheduled)-1]
		want := c.Clock.Add(st.wantInterval).Unix()
		if got.NotBefore != want || got.Score != 0.75 || got.Depth != 1 {
			t.Errorf("step %d: scheduled %+v, want not before %d (+%v), score 0.75, depth 1", i, got, want, st.wantInterval)
		}
		if c.RevisitAt(r) != want || c.State(r) != frontier.Crawled {
			t.Errorf("step %d: revisit at %d, state %v", i, c.RevisitAt(r), c.State(r))
		}
		if _, ok := next.Meta.Get("redirect_urls"); ok {
			t.Errorf("step %d: the next fetch carries the last fetch's redirect chain", i)
		}
		if i == 2 && (string(next.Headers.Get("If-None-Match")) != `"v1"` || len(next.Headers.Get("If-Modified-Since")) == 0) {
			t.Errorf("after a 304 the validators were lost: %q", next.Headers)
		}
		c.Clock = time.Unix(got.NotBefore, 0)
		r = next
	}
}

// TestIntervalsConverge simulates pages that change on a known schedule with an injected clock: a page that
// never changes converges to max_interval, one that changes at every fetch to min_interval, and one that
// changes every period T settles around T/2: with grow 2 and shrink 1/2 the interval stops drifting where half
// the fetches see a change. It then oscillates a step or two either side (the intervals are initial·2^k), so
// the test asks for a geometric mean in [T/4, T] and every interval in [T/8, T].
func TestIntervalsConverge(t *testing.T) {
	s, _ := New(opts())
	for _, tc := range []struct {
		name   string
		period time.Duration // 0: never changes; -1: changes at every fetch
		lo, hi time.Duration
	}{
		{"never", 0, 64 * time.Hour, 64 * time.Hour},
		{"always", -1, time.Hour, time.Hour},
		{"every 8h", 8 * time.Hour, 2 * time.Hour, 8 * time.Hour},
		{"every 20h", 20 * time.Hour, 5 * time.Hour, 20 * time.Hour},
		{"every 40h", 40 * time.Hour, 10 * time.Hour, 40 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := strategytest.New(nil)
			start := time.Unix(1_000_000, 0)
			c.Clock = start
			r := &frontier.Request{URL: "http://a/", Method: "GET"}
			var tail []time.Duration
			for i := range 200 {
				body := "v0"
				switch {
				case tc.period < 0:
					body = fmt.Sprint(i)
				case tc.period > 0:
					body = fmt.Sprint(c.Clock.Sub(start) / tc.period)
				}
				r = fetch(t, s, c, r, 200, body, nil)
				due := time.Unix(c.Scheduled[len(c.Scheduled)-1].NotBefore, 0)
				if i >= 150 {
					tail = append(tail, due.Sub(c.Clock))
				}
				c.Clock = due
			}
			var logSum float64
			for _, d := range tail {
				logSum += math.Log(float64(d))
				if tc.period > 0 && (d < tc.period/8 || d > tc.period) || tc.period <= 0 && (d < tc.lo || d > tc.hi) {
					t.Fatalf("interval %v after 150 fetches; tail %v", d, tail)
				}
			}
			if mean := time.Duration(math.Exp(logSum / float64(len(tail)))).Round(time.Second); mean < tc.lo || mean > tc.hi {
				t.Errorf("geometric mean interval %v, want within [%v, %v]; tail %v", mean, tc.lo, tc.hi, tail)
			}
		})
	}
}

func TestDiscoveryAndLostRevisits(t *testing.T) {
	s, _ := New(opts())
	c := strategytest.New(map[string]frontier.State{"http://a/done": frontier.Crawled, "http://a/lost": frontier.Crawled,
		"http://a/q": frontier.Queued})
	c.Clock = time.Unix(1_000_000, 0)
	c.Revisit["http://a/done"] = c.Clock.Unix() + 3600     // due later: its revisit is queued
	c.Revisit["http://a/lost"] = c.Clock.Unix() - 100*3600 // long overdue: the queued revisit was lost
	s.Seeds(c, []*frontier.Request{{URL: "http://a/"}})
	parent := &frontier.Request{URL: "http://a/"}
	parent.SetMetaDepth(0)
	s.LinksExtracted(c, parent, []*frontier.Request{{URL: "http://a/new"}, {URL: "http://a/done"}, {URL: "http://a/lost"}, {URL: "http://a/q"}})
	want := []strategytest.Scheduled{
		{URL: "http://a/", Score: 1, Depth: 0},
		{URL: "http://a/new", Score: 0.5, Depth: 1},
		{URL: "http://a/lost", Score: 0.75, Depth: 1, NotBefore: c.Clock.Unix()},
	}
	if fmt.Sprint(c.Scheduled) != fmt.Sprint(want) {
		t.Errorf("scheduled %+v\nwant      %+v", c.Scheduled, want)
	}
	s.RequestError(c, &frontier.Request{URL: "http://a/new"}, "DNSLookupError")
	if c.State(&frontier.Request{URL: "http://a/new"}) != frontier.Error || c.Scheduled[len(c.Scheduled)-1].NotBefore != c.Clock.Add(4*time.Hour).Unix() {
		t.Errorf("after an error: %+v", c.Scheduled[len(c.Scheduled)-1])
	}
}

// TestSitemapLastMod: a sitemap link whose lastmod is after the page's last possible fetch (its due time less
// min_interval) is fetched again now; an older lastmod, or none, leaves the queued revisit alone.
func TestSitemapLastMod(t *testing.T) {
	s, _ := New(opts())
	c := strategytest.New(map[string]frontier.State{"http://a/changed": frontier.Crawled, "http://a/same": frontier.Crawled,
		"http://a/plain": frontier.Crawled})
	c.Clock = time.Unix(1_000_000, 0)
	now := c.Clock.Unix()
	due := now + 3*3600 // the last fetch was at least min_interval (1 h) before the due time
	for _, u := range []string{"http://a/changed", "http://a/same", "http://a/plain"} {
		c.Revisit[u] = due
	}
	link := func(u string, lastmod int64) *frontier.Request {
		r := &frontier.Request{URL: u}
		if lastmod > 0 {
			r.Meta.Set(MetaKeyLastMod, lastmod*1000)
		}
		return r
	}
	minI := int64(opts().Min / time.Second)
	parent := &frontier.Request{URL: "http://a/sitemap.xml"}
	parent.SetMetaDepth(0)
	s.LinksExtracted(c, parent, []*frontier.Request{
		link("http://a/changed", due-minI+1), // after the latest the last fetch can have been
		link("http://a/same", due-minI),      // not after it: maybe before the last fetch
		link("http://a/plain", 0),
	})
	want := []strategytest.Scheduled{{URL: "http://a/changed", Score: 0.75, Depth: 1, NotBefore: now}}
	if fmt.Sprint(c.Scheduled) != fmt.Sprint(want) {
		t.Errorf("scheduled %+v\nwant      %+v", c.Scheduled, want)
	}
}
