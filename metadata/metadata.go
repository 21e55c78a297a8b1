// Package metadata records what the crawl learned about each page (DESIGN.md §4, "metadata") and the
// per-domain counters strategies need ("domain metadata"). It defines the interfaces HBase and Pebble
// implement and an in-memory implementation for unit tests.
//
// It imports only the frontier package and the standard library.
package metadata

import (
	"context"

	"github.com/frontiercrawl/frontier"
)

// Page is the record of one URL. Zero fields are "unknown" and do not overwrite known values on Put.
type Page struct {
	Fingerprint frontier.Fingerprint
	URL         string
	FirstSeen   int64 // Unix seconds; kept from the first Put that sets it
	LastFetched int64 // Unix seconds
	Status      int   // HTTP status of the last fetch
	Depth       int
	ContentType string
	Error       string // stable error name of the last failed fetch, e.g. "DNSLookupError"
	RedirectTo  frontier.Fingerprint
}

// Store persists page records. Safe for concurrent use.
type Store interface {
	// Put merges the records into the store (see Page for the merge rule).
	Put(ctx context.Context, pages []Page) error
	// Get returns the record of fp and whether it exists.
	Get(ctx context.Context, fp frontier.Fingerprint) (Page, bool, error)
}

// Domains keeps per-domain counters (e.g. pages queued per registrable domain). Safe for concurrent use.
type Domains interface {
	// Add adds delta to counter name of each domain and returns the new values, in order.
	Add(ctx context.Context, name string, domains []string, delta []int64) ([]int64, error)
	// Get returns the counter values, 0 for domains never counted.
	Get(ctx context.Context, name string, domains []string) ([]int64, error)
}
