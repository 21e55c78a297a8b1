package spider

import (
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// TestRestartRefetchesOnlyInFlight cancels a spider mid-batch, starts another on the same feed and state
// directory, and counts at the server how often each URL was fetched: only requests that were in flight at
// the cancellation may be fetched twice.
func TestRestartRefetchesOnlyInFlight(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Plain = true
	wcfg.Hosts, wcfg.PagesPerHost = 5, 40
	site := web.Start(t, wcfg)
	var urls []string
	for _, p := range site.Pages() {
		urls = append(urls, p.URL)
	}
	h := newHarness(t, site, urls)
	cfg := testConfig(t)
	cfg.Delay = 10 * time.Millisecond

	stop := h.start(cfg)
	// Cancel once about a third of the outcomes are reported.
	for len(outcomes(h.log.records())) < len(urls)/3 {
		select {
		case <-h.log.sent:
		case <-time.After(50 * time.Millisecond):
		}
	}
	stop()
	first := len(outcomes(h.log.records()))
	if first >= len(urls) {
		t.Skip("the first run finished everything before the cancellation; nothing to check")
	}
	t.Logf("first run: %d of %d reported; committed %d", first, len(urls), h.feed.Committed())

	stop = h.start(cfg)
	h.waitOutcomes(urls)
	stop()

	dup := refetched(t, site, urls)
	inFlight := min(cfg.MaxInFlight, len(site.Hosts())*cfg.ConnsPerHost)
	t.Logf("fetched twice: %d (at most %d requests can be in flight)", dup, inFlight)
	if dup > inFlight {
		t.Errorf("%d URLs fetched twice, want <= %d (the requests in flight)", dup, inFlight)
	}
	if c := h.feed.Committed(); c != int64(len(urls)) {
		t.Errorf("committed %d, want %d", c, len(urls))
	}
}

// refetched checks, from the site's request logs, that every URL of urls was fetched once or twice (a restart
// may fetch again what was in flight), and returns how many were fetched twice.
func refetched(t *testing.T, site *web.Site, urls []string) int {
	t.Helper()
	fetches := site.Fetches()
	dup := 0
	for _, u := range urls {
		switch n := fetches[u]; {
		case n == 0:
			t.Errorf("%s never fetched", u)
		case n > 2:
			t.Errorf("%s fetched %d times", u, n)
		case n == 2:
			dup++
		}
	}
	return dup
}
