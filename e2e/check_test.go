//go:build integration

package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// refetch is a request, in the site's log, for a page that had already had its final answer.
type refetch struct {
	URL string // the page's normalised URL
	Req web.Request
}

// refetches lists, in arrival order, the requests for a page that already had a final answer: one that was
// neither a 5xx, 408 or 429 nor no answer at all (those the strategy workers retry on purpose). robots.txt is
// left out: a restarted spider reads it again on purpose.
func refetches(site *web.Site) []refetch {
	final := map[string]bool{}
	var out []refetch
	for _, r := range site.Requests() {
		u, ok := pageURL(site, r)
		if !ok {
			continue
		}
		if final[u] {
			out = append(out, refetch{URL: u, Req: r})
		}
		if r.Status != 0 && r.Status != 408 && r.Status != 429 && r.Status < 500 {
			final[u] = true
		}
	}
	return out
}

// pageURL returns the normalised URL of the page r asked the site for, and false for robots.txt or a host the
// site does not serve.
func pageURL(site *web.Site, r web.Request) (string, bool) {
	h := site.Host(r.Host)
	if h == nil || strings.HasSuffix(r.Target, "/robots.txt") {
		return "", false
	}
	return h.URL(r.Target), true
}

// checkArchived checks the WARC files in warcDir once the crawlers have stopped: none is left ".open", every
// file reads (frontiertest.CheckWARC), and every page the site answered a request for that keep accepts
// (robots.txt aside) has a response record under its URL as requested.
func checkArchived(t *testing.T, site *web.Site, warcDir string, keep func(web.Request) bool) {
	t.Helper()
	if open, _ := filepath.Glob(filepath.Join(warcDir, "*.open")); len(open) > 0 {
		t.Errorf("WARC files left open after the crawlers stopped: %v", open)
	}
	sum := frontiertest.CheckWARC(t, warcDir)
	archived := map[string]bool{}
	for _, r := range sum.Responses {
		archived[r.URI] = true
	}
	served := map[string]bool{}
	for _, r := range site.Requests() {
		h := site.Host(r.Host)
		if h == nil || strings.HasSuffix(r.Target, "/robots.txt") || !keep(r) {
			continue
		}
		served[h.Origin+r.Target] = true
	}
	var lost []string
	for u := range served {
		if !archived[u] {
			lost = append(lost, u)
		}
	}
	slices.Sort(lost)
	t.Logf("archive: %d files, %d response records (%d records in all); %d pages served", sum.Files, len(sum.Responses), sum.Records, len(served))
	if len(lost) > 0 {
		t.Errorf("%d of %d served pages are not in the archive: %v", len(lost), len(served), first(lost, 10))
	}
}
