package urlfrontier

import (
	"context"
	"errors"
	"time"
)

// DefaultCrawl is the crawl ID of requests that name none (the API's "DEFAULT").
const DefaultCrawl = "DEFAULT"

// DefaultLease is how long a URL handed out by GetURLs stays leased when the client asks for 0 seconds.
const DefaultLease = 30 * time.Second

// Status is the outcome of one URL put (the API's AckMessage.Status).
type Status uint8

// The outcomes of a put: OK, Skipped (never send it again: already known, or invalid), Fail (may be sent again).
const (
	OK Status = iota
	Skipped
	Fail
)

// ErrNotFound is returned for a URL or queue the frontier does not hold.
var ErrNotFound = errors.New("urlfrontier: not found")

// URLInfo is a URL as clients see it: its queue (Key), crawl and metadata.
type URLInfo struct {
	URL      string
	Key      string // the queue; "" in a put means the URL's host
	CrawlID  string // "" in a request means DefaultCrawl
	Metadata map[string][]string
}

// Put is one URL a client reports: discovered (added only if unknown) or known (always updated; Refetch is the
// epoch second from which it may be handed out again, 0 = done for good).
type Put struct {
	Info    URLInfo
	Known   bool
	Refetch int64
	// feed is set on the puts a Gateway makes of its spider-feed requests (Store.Put's third kind: added if
	// unknown or done, a replay skipped).
	feed *feedEntry
}

// feedEntry is the spider-feed request a Gateway's put came from.
type feedEntry struct {
	src  []byte // the encoded request
	part int32  // its feed partition
	off  int64  // its offset + 1
	due  int64  // unix ms it may be handed out from (the request's not-before); 0 = now
}

// GetParams selects the URLs GetURLs hands out (see the API's GetParams).
type GetParams struct {
	MaxURLsPerQueue int    // 0: no limit
	MaxQueues       int    // 0: no limit
	Key             string // one queue only
	CrawlID         string // ignored with AnyCrawl
	AnyCrawl        bool
	Lease           time.Duration // 0: DefaultLease
}

// URLStatus is what the frontier holds about one URL.
type URLStatus struct {
	Info    URLInfo
	Refetch int64 // epoch seconds; 0 = done
	Created int64 // epoch seconds
}

// ListParams selects URLs for ListURLs, CountURLs and PurgeURLs.
type ListParams struct {
	CrawlID     string
	Key         string // "" = every queue
	Filter      string // substring of the URL; "" = every URL
	IgnoreCase  bool
	Start, Size int // pagination (ListURLs only); Size 0 = 100
}

// Stats are a queue's or a crawl's counters.
type Stats struct {
	CrawlID        string
	Size           uint64 // URLs not done: queued or leased
	InProcess      uint64 // leased now
	Completed      uint64 // done for good
	ActiveQueues   uint64 // queues holding URLs not done
	NumberOfQueues uint64
}

// Backend is the frontier behind the gRPC service: what the URLFrontier API needs of a frontier, in Go types.
// Server translates the wire messages; Store implements it over Pebble for the standalone, and a cluster
// gateway would implement it over the spider feed and the spider log. Safe for concurrent use.
type Backend interface {
	// Put applies puts in order and returns one status each; an error means none was applied.
	Put(ctx context.Context, puts []Put) ([]Status, error)
	// Get leases and returns the URLs due now.
	Get(ctx context.Context, p GetParams) ([]URLInfo, error)
	ListCrawls(ctx context.Context) ([]string, error)
	DeleteCrawl(ctx context.Context, crawl string) (uint64, error)
	// ListQueues returns a page of the crawl's queue keys (sorted) and how many match in all.
	ListQueues(ctx context.Context, crawl string, start, size int, includeInactive bool) ([]string, uint64, error)
	Stats(ctx context.Context, crawl, key string) (Stats, error)
	DeleteQueue(ctx context.Context, crawl, key string) (uint64, error)
	BlockQueue(ctx context.Context, crawl, key string, until int64) error
	// SetDelay sets a queue's delay in seconds; key "" sets the default of every queue without its own.
	SetDelay(ctx context.Context, crawl, key string, seconds int) error
	SetCrawlLimit(ctx context.Context, crawl, key string, limit uint32) error
	URLStatus(ctx context.Context, crawl, key, url string) (URLStatus, error)
	ListURLs(ctx context.Context, p ListParams, emit func(URLStatus) error) error
	CountURLs(ctx context.Context, p ListParams) (uint64, error)
	// PurgeURLs removes the URLs created before the epoch second before.
	PurgeURLs(ctx context.Context, p ListParams, before int64) (uint64, error)
	SetActive(ctx context.Context, active bool) error
	Active(ctx context.Context) (bool, error)
}
