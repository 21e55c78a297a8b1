package standalone

import (
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// TestCrawlSitemaps: host1's pages under /hidden/ are linked from no page, only from its sitemaps (an index
// named by robots.txt, listing an XML urlset, a gzipped one and a text one). With spider.sitemaps on, the
// crawl fetches every one of them and every sitemap once, and ends by itself; with it off (the default), none.
func TestCrawlSitemaps(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[on], func(t *testing.T) {
			wcfg := web.DefaultConfig()
			wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = 3, 10, true // Plain: host1 still serves robots.txt
			wcfg.Hostile.SitemapPages = 30
			site := web.Start(t, wcfg)
			cfg := hostileCrawlConfig()
			cfg.Spider.CommitInterval = 25 * time.Millisecond
			cfg.Spider.Sitemaps = on
			r := crawlSite(t, site, cfg, web.ReachOptions{InScope: web.SeedDomains(site.Seeds()...)})
			if c := r.check; c.Coverage() != 1 || len(c.Twice) > 0 {
				t.Errorf("coverage %.4f, missing %v, twice %v", c.Coverage(), c.Missing, c.Twice)
			}
			fetched := site.Fetches()
			n := 0
			for _, u := range site.SitemapURLs() {
				if fetched[u] > 0 {
					n++
				}
			}
			want := 0
			if on {
				want = len(site.SitemapURLs())
			}
			if n != want {
				t.Errorf("%d of the %d pages only sitemaps list were fetched, want %d", n, len(site.SitemapURLs()), want)
			}
			origin := strings.TrimSuffix(site.SitemapIndex(), "/sitemap_index.xml")
			for _, f := range []string{"/sitemap_index.xml", "/sitemap-a.xml", "/sitemap-b.xml.gz", "/sitemap-c.txt"} {
				if got := fetched[origin+f]; on && got != 1 || !on && got != 0 {
					t.Errorf("%s fetched %d times (sitemaps %v)", f, got, on)
				}
			}
			if r.sum.Queued != 0 {
				t.Errorf("%d still queued", r.sum.Queued)
			}
		})
	}
}
