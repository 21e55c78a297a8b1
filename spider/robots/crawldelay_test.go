package robots

import (
	"fmt"
	"testing"
	"time"
)

// crawlDelayRef is CrawlDelay as it was before it stopped building selected's slice: the reference the
// differential test compares against.
func crawlDelayRef(r *Rules, agent string) (time.Duration, bool) {
	var d time.Duration
	found := false
	for _, g := range r.selected(ProductToken(agent)) {
		if g.hasDelay && (!found || g.crawlDelay > d) {
			d, found = g.crawlDelay, true
		}
	}
	return d, found
}

// TestCrawlDelayMatchesSelected checks CrawlDelay against the slice-building reference on groups that name
// the agent, "*", both (in either order), neither, and several of each, with and without delays.
func TestCrawlDelayMatchesSelected(t *testing.T) {
	lines := []string{
		"User-agent: *\n", "User-agent: FrontierBot\n", "User-agent: other\n", "User-agent: frontierbot/2\n",
		"Crawl-delay: 3\n", "Crawl-delay: 1\n", "Crawl-delay: 7.5\n", "Crawl-delay: x\n", "Disallow: /a\n", "\n",
	}
	agents := []string{"FrontierBot/1.0", "frontierbot", "other", "nobody", "*"}
	n := 0
	// Every robots.txt of up to 5 lines drawn from lines (10^5 bodies), each asked for every agent.
	var walk func(body string, depth int)
	walk = func(body string, depth int) {
		r := Parse([]byte(body))
		for _, a := range agents {
			d, ok := r.CrawlDelay(a)
			wd, wok := crawlDelayRef(r, a)
			if d != wd || ok != wok {
				t.Fatalf("%q agent %q: CrawlDelay = %v, %v; reference %v, %v", body, a, d, ok, wd, wok)
			}
			n++
		}
		if depth == 5 {
			return
		}
		for _, l := range lines {
			walk(body+l, depth+1)
		}
	}
	walk("", 0)
	if n == 0 {
		t.Fatal("no cases")
	}
}

// BenchmarkCrawlDelay is the spider's per-page question (delayFor) on a robots.txt with a "*" group and
// a named one; the spider passes the product token.
func BenchmarkCrawlDelay(b *testing.B) {
	r := Parse([]byte("User-agent: *\nDisallow: /private\nCrawl-delay: 1\n\nUser-agent: otherbot\nDisallow: /\n"))
	for _, agent := range []string{"FrontierBot/1.0 (+bot)", "frontierbot"} {
		b.Run(fmt.Sprintf("agent=%s", agent), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, _ = r.CrawlDelay(agent)
			}
		})
	}
}
