package frontiertest

import (
	"slices"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// CheckHostDown checks the end of a crawl during which host down went away for good while pending, pages of
// it that had failed once, waited for their retry (web.Site.DownWhenOnlyRetriesLeft), acct being the crawl's
// accounting. Every page of down that the crawl knew of and that never got a 2xx answer (those pending, and any
// whose answer the closing connection cut) ends in ERROR with reason refused (the spider's name for a
// refused connection); a page that only those link to is never known, so it is not a URL the frontier lost.
// The other hosts are crawled to the end (their pages known only through down's lost ones excepted), no page
// is served twice and nothing is left queued.
func CheckHostDown(tb testing.TB, site *web.Site, down *web.Host, pending []string, acct Accounting, refused string) {
	tb.Helper()
	lost := site.NeverServed(down)
	known := site.Known()
	if n := acct.ErrorReasons[refused]; n != len(lost) || acct.Errors != len(lost) {
		tb.Errorf("%d errors %v, want %d, all %s (the pages of %s never served: %v)", acct.Errors, acct.ErrorReasons, len(lost), refused, down.Name, lost)
	}
	for _, u := range pending {
		if !slices.Contains(lost, u) {
			tb.Errorf("%s was served after %s went down", u, down.Name)
		}
	}
	check, err := site.CheckCrawlWith(web.ReachOptions{}, site.Seeds()...)
	if err != nil {
		tb.Fatal(err)
	}
	other := func(us []string) []string {
		return slices.DeleteFunc(slices.Clone(us), func(u string) bool { return strings.HasPrefix(u, down.Origin+"/") || !known[u] })
	}
	if m, u := other(check.Missing), other(check.Unserved); len(m) > 0 || len(u) > 0 {
		tb.Errorf("on the hosts that stayed up: missing %v, never served %v", m, u)
	}
	if len(check.Twice) > 0 {
		tb.Errorf("served twice: %v", check.Twice)
	}
	if acct.Queued != 0 {
		tb.Errorf("%d still queued", acct.Queued)
	}
}
