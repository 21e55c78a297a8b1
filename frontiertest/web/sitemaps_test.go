package web

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/sitemap"
)

// TestSitemaps: host1's robots.txt names the index, the index lists the three sitemaps, and together they
// list every hidden page once; no page links a hidden page.
func TestSitemaps(t *testing.T) {
	cfg := smallConfig()
	cfg.Hostile.SitemapPages = 20
	s := Start(t, cfg)
	c := s.Client(time.Minute)
	defer c.CloseIdleConnections()
	h0 := s.Hosts()[0]
	robots := string(readAll(t, get(t, c, h0.Origin+"/robots.txt")))
	if !strings.Contains(robots, "Sitemap: "+s.SitemapIndex()) {
		t.Fatalf("robots.txt has no Sitemap line:\n%s", robots)
	}
	if r := string(readAll(t, get(t, c, s.Hosts()[1].Origin+"/robots.txt"))); strings.Contains(r, "Sitemap") {
		t.Errorf("host2's robots.txt names a sitemap:\n%s", r)
	}
	parse := func(raw string, depth int) []sitemap.Entry {
		resp := get(t, c, raw)
		defer resp.Body.Close()
		u, _ := url.Parse(raw)
		var out []sitemap.Entry
		if _, err := sitemap.Parse(resp.Body, sitemap.Options{URL: u, Depth: depth}, func(e sitemap.Entry) error { out = append(out, e); return nil }); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return out
	}
	var got []string
	for _, e := range parse(s.SitemapIndex(), 1) {
		if !e.Sitemap {
			t.Errorf("index entry %s is not a sitemap", e.Loc)
		}
		for _, p := range parse(e.Loc, 2) {
			got = append(got, p.Loc)
		}
	}
	want := s.SitemapURLs()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(want) != 20 {
		t.Errorf("sitemaps list\n %v\nwant\n %v", got, want)
	}
	reach, err := s.Reachable(s.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range want {
		if _, ok := reach[u]; ok {
			t.Errorf("%s is reachable by links", u)
		}
		if p := s.Page(u); p == nil || p.Status != 200 {
			t.Errorf("%s is not a page", u)
		}
	}
}
