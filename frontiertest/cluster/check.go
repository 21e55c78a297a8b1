package cluster

import (
	"testing"

	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// CheckCrawl compares what site's servers saw with what a crawl from its seeds reaches (web.Site.CheckCrawl)
// and fails the test for every URL missing, served twice, requested against robots.txt or never served with
// a 2xx answer. With allowTwice, pages served twice are not an error (a test that kills processes bounds them
// itself), nor are unserved ones.
func CheckCrawl(tb testing.TB, site *web.Site, allowTwice bool) web.CrawlCheck {
	tb.Helper()
	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		tb.Fatal(err)
	}
	switch {
	case allowTwice && (len(check.Missing) > 0 || len(check.RobotsViolations) > 0):
		tb.Errorf("crawl of %d reachable URLs: missing %v, robots violations %v", check.Reachable, check.Missing, check.RobotsViolations)
	case !allowTwice && !check.OK():
		tb.Errorf("crawl of %d reachable URLs: missing %v, fetched twice %v, robots violations %v, unserved %v",
			check.Reachable, check.Missing, check.Twice, check.RobotsViolations, check.Unserved)
	}
	return check
}

// Reachable returns how many URLs a crawl from site's seeds reaches (web.Site.Reachable).
func Reachable(tb testing.TB, site *web.Site) int {
	tb.Helper()
	reach, err := site.Reachable(site.Seeds()...)
	if err != nil {
		tb.Fatal(err)
	}
	return len(reach.URLs())
}
