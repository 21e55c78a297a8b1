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
