package pebblestore

import (
	"context"

	"github.com/cockroachdb/pebble/v2"

	"github.com/frontiercrawl/frontier/metadata"
)

// SetPageMerger makes the DBs opened from now on use the page merge operator (pageMerger), or not.
func SetPageMerger(on bool) {
	openHook = nil
	if on {
		openHook = func(o *pebble.Options) { o.Merger = pageMerger }
	}
}

// PutMerge is Pages.Put writing merge operands (putMerge); the DB must be opened with SetPageMerger(true).
func PutMerge(p *Pages, ctx context.Context, pages []metadata.Page) error {
	return p.putMerge(ctx, pages)
}

// SetPageFilter sizes the page filter p loads at its next Put (firstCap keys in its first layer, maxBytes in
// all; 0 is the default) and drops the one it holds.
func SetPageFilter(p *Pages, firstCap, maxBytes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.filter, p.filterCap, p.filterMax = nil, firstCap, maxBytes
}

// SetPageCache empties p's page cache and bounds it at maxBytes (0 is the default).
func SetPageCache(p *Pages, maxBytes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cache = pageCache{max: maxBytes}
}

// PageFilterFull reports whether p's page filter is loaded and full.
func PageFilterFull(p *Pages) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.filter != nil && p.filter.Full()
}

// PageBounds returns the bounds p sizes its page filter and page cache with (0: the defaults).
func PageBounds(p *Pages) (filterMax, cacheMax int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.filterMax, p.cache.max
}
