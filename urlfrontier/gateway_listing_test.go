package urlfrontier

import (
	"errors"
	"slices"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/spider"
	"github.com/frontiercrawl/frontier/state"
)

// TestGatewayURLStatusFromCrawl: GetURLStatus answers for a URL the gateway does not hold from the crawl's
// states and page metadata, under the fingerprint of the crawl asked; the gateway's own store answers first.
func TestGatewayURLStatusFromCrawl(t *testing.T) {
	states, pages := state.NewMemory(), metadata.NewMemory()
	w := newGWTest(t)
	w.crawl = &CrawlStores{States: states, Pages: pages}
	w.restart()
	ctx := t.Context()
	fp := func(u string) frontier.Fingerprint {
		f, err := (spider.SimpleIdentity{}).Fingerprint(u)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	crawled, queued, revisit := "http://c.test/done", "http://c.test/queued", "http://c.test/revisit"
	if err := states.Put(ctx, []frontier.Fingerprint{fp(crawled), fp(queued), fp(revisit)},
		[]state.Entry{{State: frontier.Crawled}, {State: frontier.Queued}, {State: frontier.Error, RevisitAt: 4_000_000_000}}); err != nil {
		t.Fatal(err)
	}
	if err := pages.Put(ctx, []metadata.Page{{Fingerprint: fp(crawled), URL: crawled, FirstSeen: 1_700_000_000, Status: 404}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		crawl, key, url string
		refetch         func(int64) bool
		meta            map[string][]string
		created         int64
		key2            string
	}{
		{"", "", crawled, func(r int64) bool { return r == 0 }, map[string][]string{MetaState: {"CRAWLED"}, MetaStatus: {"404"}}, 1_700_000_000, "c.test"},
		{"", "mine", queued, func(r int64) bool { return r > 0 }, map[string][]string{MetaState: {"QUEUED"}}, 0, "mine"},
		{DefaultCrawl, "", revisit, func(r int64) bool { return r == 4_000_000_000 }, map[string][]string{MetaState: {"ERROR"}}, 0, "c.test"},
	} {
		st, err := w.g.URLStatus(ctx, tc.crawl, tc.key, tc.url)
		if err != nil {
			t.Errorf("URLStatus(%q) = %v", tc.url, err)
			continue
		}
		if !tc.refetch(st.Refetch) || st.Created != tc.created || st.Info.Key != tc.key2 || st.Info.CrawlID != DefaultCrawl || !sameMeta(st.Info.Metadata, tc.meta) {
			t.Errorf("URLStatus(%q) = %+v", tc.url, st)
		}
	}
	// Another crawl is another frontier: its fingerprints differ, and the crawl does not know the URL there.
	if _, err := w.g.URLStatus(ctx, "c1", "", crawled); !errors.Is(err, ErrNotFound) {
		t.Errorf("URLStatus in another crawl = %v, want ErrNotFound", err)
	}
	if _, err := w.g.URLStatus(ctx, "", "", "http://c.test/never"); !errors.Is(err, ErrNotFound) {
		t.Errorf("URLStatus of an unknown URL = %v, want ErrNotFound", err)
	}
	// The gateway's own store answers first: a URL it holds comes with its lease state and the client's
	// metadata.
	w.toFeed(&frontier.Request{URL: queued})
	waitHeld(t, w, 1)
	st, err := w.g.URLStatus(ctx, "", "", queued)
	if err != nil || st.Info.Metadata[MetaState] != nil || st.Info.Key != "c.test" {
		t.Errorf("URLStatus of a URL the gateway holds = %+v, %v: want the gateway's record", st, err)
	}
}

func sameMeta(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
