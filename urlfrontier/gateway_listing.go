package urlfrontier

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/state"
)

// Metadata keys of a GetURLStatus answer the gateway builds from the crawl's stores (CrawlStores) for a URL
// its own store does not hold.
const (
	// MetaState is the URL's state in the crawl: QUEUED, CRAWLED or ERROR (frontier.State's names).
	MetaState = "frontier.state"
	// MetaStatus is the HTTP status of the URL's last fetch, when the page metadata has one (StormCrawler's
	// key for it).
	MetaStatus = "fetch.statusCode"
	// MetaError is the stable error name of the URL's last failed fetch (e.g. DNSLookupError).
	MetaError = "frontier.error"
)

// CrawlStores are the crawl's own stores, which a Gateway reads to answer GetURLStatus for a URL it does not
// hold: the strategy workers' states (the URL-seen test) and the DB worker's page metadata. The standalone
// passes its Pebble stores, the cluster gateway its HBase tables.
type CrawlStores struct {
	States state.Store    // required
	Pages  metadata.Store // nil: answers carry no creation date, status or error
}

// URLStatus implements Backend. The gateway's own store answers first (the URLs it holds or held, with their
// leases and the client's metadata). A URL it does not hold is looked up in the crawl's stores, when the
// gateway has them (GatewayDeps.Crawl), under the fingerprint a put of it would have (its crawl's): a URL the
// crawl knows (another partition's, one a spider fetched, one not dispatched yet) is answered as a known item
// in its host's queue (or the key asked), with metadata frontier.state, and from the page metadata
// fetch.statusCode, frontier.error and creation_date (first seen). Its refetchable_from_date is 0 for a URL
// crawled or in error with no revisit planned (done), the revisit time for one with, and the time of the
// answer for one QUEUED (due: in the crawl's queue or on its way to a fetcher). The states are what the
// strategy workers have written back from their caches: a URL seen in the last seconds may not show yet.
// NOT_FOUND: neither knows it.
func (g *Gateway) URLStatus(ctx context.Context, crawl, key, u string) (URLStatus, error) {
	st, err := g.Store.URLStatus(ctx, crawl, key, u)
	if !errors.Is(err, ErrNotFound) || g.deps.Crawl == nil || g.deps.Crawl.States == nil {
		return st, err
	}
	crawl = NormCrawl(crawl)
	if key == "" {
		if key, err = HostKey(u); err != nil {
			return URLStatus{}, ErrNotFound
		}
	}
	fp, err := g.fingerprint(crawl, u)
	if err != nil {
		return URLStatus{}, ErrNotFound // no fingerprint: the crawl cannot hold it
	}
	entries, found := make([]state.Entry, 1), make([]bool, 1)
	if err := g.deps.Crawl.States.Get(ctx, []frontier.Fingerprint{fp}, entries, found); err != nil {
		return URLStatus{}, fmt.Errorf("urlfrontier: read the crawl's state of %s: %w", u, err)
	}
	if !found[0] {
		return URLStatus{}, ErrNotFound
	}
	e := entries[0]
	out := URLStatus{Info: URLInfo{URL: u, Key: key, CrawlID: crawl, Metadata: map[string][]string{MetaState: {e.State.String()}}}}
	switch e.State {
	case frontier.Crawled, frontier.Error:
		out.Refetch = e.RevisitAt // 0: done
	default:
		out.Refetch = time.Now().Unix()
	}
	if g.deps.Crawl.Pages != nil {
		p, ok, err := g.deps.Crawl.Pages.Get(ctx, fp)
		if err != nil {
			return URLStatus{}, fmt.Errorf("urlfrontier: read the crawl's page metadata of %s: %w", u, err)
		}
		if ok {
			out.Created = p.FirstSeen
			if p.Status > 0 {
				out.Info.Metadata[MetaStatus] = []string{strconv.Itoa(p.Status)}
			}
			if p.Error != "" {
				out.Info.Metadata[MetaError] = []string{p.Error}
			}
		}
	}
	return out, nil
}
