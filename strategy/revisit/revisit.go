// Package revisit is the "revisit" strategy: it crawls breadth first like bfs and fetches every page again
// after an interval that adapts to how often the page changes, as Heritrix's and StormCrawler's adaptive
// schedulers do.
//
// # The interval
//
// A page's first fetch sets its interval to initial_interval. At each later fetch the page is compared with
// the previous one: unchanged (same body digest, or a 304 Not Modified answer to the conditional request)
// multiplies the interval by grow; changed multiplies it by shrink; the result is kept within
// [min_interval, max_interval]. A page that never changes drifts to max_interval, one that changes at every
// fetch to min_interval, and one that changes every T settles where the fetches start to see the change.
// A failed fetch (request_error, or an HTTP error status) counts as unchanged, so dead pages fade out to
// max_interval without being dropped (they may come back).
//
// # Conditional requests
//
// The next fetch carries If-None-Match (the last ETag) and If-Modified-Since (the last Last-Modified) as
// request headers, which the spider sends as given; a server that honours them answers 304 and sends no body.
//
// # Where the schedule lives
//
// The next fetch is scheduled as soon as a page is fetched, with its due time in meta frontier_not_before, so
// the queue (Pebble or HBase) holds it and hands it out when due; its interval, last digest and validators
// travel in the request's meta (revisit_interval, revisit_digest) and headers. The due time is also stored
// beside the page's state (Context.SetRevisitAt), so after a restart a page whose revisit was lost (it is
// CRAWLED with a due time long past, or was crawled by another strategy and has none) is scheduled again
// the next time a link to it is seen. Times are Unix seconds, from the worker's clock (Context.Now).
//
// # Sitemaps
//
// A link from a sitemap carries the page's lastmod (meta sitemap_lastmod, Unix milliseconds; see
// spider/sitemaps.go). A crawled page whose lastmod is later than its last fetch could have been (its due
// time minus min_interval: the last fetch was at least min_interval before it) has changed since: it is
// fetched again now rather than at its due time, and its interval starts over. An older lastmod changes
// nothing, so a sitemap re-read every day costs no fetch of the pages it says are unchanged.
//
// # Options
//
//	initial_interval  duration  default 24h
//	min_interval      duration  default 1h
//	max_interval      duration  default 720h (30 days)
//	grow              float     factor for an unchanged page, default 2 (> 1)
//	shrink            float     factor for a changed page, default 0.5 (in (0, 1))
//	revisit_score     float     score of a due revisit in [0, 1], default 1: due revisits go before discovery
//	max_depth         int       links followed to this depth, default 0 = no limit
//
// The options every strategy takes (strategy.Common) apply too.
package revisit

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
)

func init() { strategy.Register("revisit", strategy.OptionsFactory(DefaultOptions, New)) }

// Meta keys of a scheduled revisit.
const (
	MetaKeyInterval = "revisit_interval" // int, seconds: the interval that led to this fetch
	MetaKeyDigest   = "revisit_digest"   // str: the body digest of the previous fetch
	// MetaKeyLastMod is a sitemap entry's lastmod, Unix milliseconds (spider.MetaKeyLastMod).
	MetaKeyLastMod = "sitemap_lastmod"
)

// Options configure the strategy; see the package doc.
type Options struct {
	Initial      time.Duration `mapstructure:"initial_interval"`
	Min          time.Duration `mapstructure:"min_interval"`
	Max          time.Duration `mapstructure:"max_interval"`
	Grow         float64       `mapstructure:"grow"`
	Shrink       float64       `mapstructure:"shrink"`
	RevisitScore float64       `mapstructure:"revisit_score"`
	MaxDepth     int64         `mapstructure:"max_depth"`
}

// DefaultOptions returns the defaults of the package doc.
func DefaultOptions() Options {
	return Options{Initial: 24 * time.Hour, Min: time.Hour, Max: 30 * 24 * time.Hour, Grow: 2, Shrink: 0.5, RevisitScore: 1}
}

// Validate reports every invalid value.
func (o Options) Validate() error {
	var errs []error
	if o.Min < time.Second || o.Max < o.Min || o.Initial < o.Min || o.Initial > o.Max {
		errs = append(errs, fmt.Errorf("want 1s <= min_interval (%v) <= initial_interval (%v) <= max_interval (%v)", o.Min, o.Initial, o.Max))
	}
	if !(o.Grow > 1) || math.IsInf(o.Grow, 0) {
		errs = append(errs, fmt.Errorf("grow = %v, want > 1", o.Grow))
	}
	if !(o.Shrink > 0 && o.Shrink < 1) {
		errs = append(errs, fmt.Errorf("shrink = %v, want in (0, 1)", o.Shrink))
	}
	if err := strategy.CheckScore(o.RevisitScore); err != nil {
		errs = append(errs, fmt.Errorf("revisit_score: %w", err))
	}
	if o.MaxDepth < 0 {
		errs = append(errs, fmt.Errorf("max_depth = %d, want >= 0", o.MaxDepth))
	}
	return errors.Join(errs...)
}

// Strategy is the revisit strategy. It keeps no state of its own.
type Strategy struct{ o Options }

// New returns the strategy.
func New(o Options) (*Strategy, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Strategy{o: o}, nil
}

// Next returns the interval after a fetch: prev is the interval that led to it (0: first fetch).
func (s *Strategy) Next(prev time.Duration, changed bool) time.Duration {
	if prev <= 0 {
		return s.o.Initial
	}
	f := s.o.Grow
	if changed {
		f = s.o.Shrink
	}
	next := time.Duration(math.Round(float64(prev) * f))
	return min(max(next, s.o.Min), s.o.Max).Round(time.Second)
}

// Seeds queues the seeds never seen before.
func (s *Strategy) Seeds(c strategy.Context, seeds []*frontier.Request) {
	for _, r := range seeds {
		s.discover(c, r, 0)
	}
}

// LinksExtracted queues the links never seen before one level down, and re-schedules a linked page whose
// revisit was lost (see the package doc).
func (s *Strategy) LinksExtracted(c strategy.Context, req *frontier.Request, links []*frontier.Request) {
	parent, _ := req.MetaDepth()
	d := parent + 1
	now := c.Now().Unix()
	for _, l := range links {
		switch c.State(l) {
		case frontier.NotCrawled:
			if s.o.MaxDepth == 0 || d <= s.o.MaxDepth {
				s.discover(c, l, d)
			}
		case frontier.Crawled:
			at := c.RevisitAt(l)
			lastmod := metaInt(l, MetaKeyLastMod) / 1000
			if at == 0 || at+int64(s.o.Max/time.Second) < now ||
				lastmod > 0 && at > now && lastmod > at-int64(s.o.Min/time.Second) {
				next := fresh(l)
				next.SetMetaDepth(d)
				s.revisit(c, next, now)
			}
		}
	}
}

func (s *Strategy) discover(c strategy.Context, r *frontier.Request, depth int64) {
	if c.State(r) != frontier.NotCrawled {
		return
	}
	r.SetMetaDepth(depth)
	if c.Schedule(r, 1/float64(depth+1)) == nil {
		c.SetState(r, frontier.Queued)
	}
}

// PageCrawled adapts the page's interval and schedules its next fetch.
func (s *Strategy) PageCrawled(c strategy.Context, resp *frontier.Response) {
	r := resp.Request
	c.SetState(r, frontier.Crawled)
	prev := time.Duration(metaInt(r, MetaKeyInterval)) * time.Second
	lastDigest := metaString(r, MetaKeyDigest)
	digest := r.MetaDigest()
	var changed bool
	switch {
	case resp.Status == 304:
		digest = lastDigest
	case resp.Status >= 200 && resp.Status < 300 && digest != "":
		changed = lastDigest != "" && digest != lastDigest
	default: // an error status, a redirect, no digest: nothing learned
		digest = lastDigest
	}
	interval := s.Next(prev, changed)
	next := fresh(r)
	next.Meta.Set(MetaKeyInterval, int64(interval/time.Second))
	if digest != "" {
		next.Meta.Set(MetaKeyDigest, digest)
	}
	etag, lm := resp.Headers.Get("ETag"), resp.Headers.Get("Last-Modified")
	if resp.Status == 304 { // a 304 may leave the validators out: keep the ones sent
		etag, lm = orBytes(etag, r.Headers.Get("If-None-Match")), orBytes(lm, r.Headers.Get("If-Modified-Since"))
	}
	if len(etag) > 0 {
		next.Headers = append(next.Headers, frontier.Header{Name: []byte("If-None-Match"), Values: [][]byte{etag}})
	}
	if len(lm) > 0 {
		next.Headers = append(next.Headers, frontier.Header{Name: []byte("If-Modified-Since"), Values: [][]byte{lm}})
	}
	s.revisit(c, next, c.Now().Add(interval).Unix())
}

// RequestError marks the request ERROR and tries again after a grown interval.
func (s *Strategy) RequestError(c strategy.Context, req *frontier.Request, _ string) {
	c.SetState(req, frontier.Error)
	prev := time.Duration(metaInt(req, MetaKeyInterval)) * time.Second
	interval := s.Next(prev, false)
	next := fresh(req)
	next.Meta.Set(MetaKeyInterval, int64(interval/time.Second))
	if d := metaString(req, MetaKeyDigest); d != "" {
		next.Meta.Set(MetaKeyDigest, d)
	}
	next.Headers = req.Headers
	s.revisit(c, next, c.Now().Add(interval).Unix())
}

func (s *Strategy) revisit(c strategy.Context, r *frontier.Request, at int64) {
	r.SetMetaNotBefore(at)
	if c.Schedule(r, s.o.RevisitScore) == nil {
		c.SetRevisitAt(r, at)
	}
}

// fresh is a new request for r's URL that keeps only the meta that identifies it (fingerprint, domain,
// depth), not what a fetch added (redirect chain, digest, truncation).
func fresh(r *frontier.Request) *frontier.Request {
	n := &frontier.Request{URL: r.URL, Method: r.Method}
	if n.Method == "" {
		n.Method = "GET"
	}
	for _, k := range []string{frontier.MetaKeyFingerprint, frontier.MetaKeyDomain, frontier.MetaKeyDepth} {
		if v, ok := r.Meta.Get(k); ok {
			n.Meta.Set(k, v)
		}
	}
	return n
}

func metaInt(r *frontier.Request, key string) int64 {
	v, _ := r.Meta.Get(key)
	switch v := v.(type) {
	case int64:
		return v
	case uint64:
		return int64(min(v, math.MaxInt64))
	}
	return 0
}

func metaString(r *frontier.Request, key string) string {
	v, _ := r.Meta.Get(key)
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

func orBytes(a, b []byte) []byte {
	if len(a) > 0 {
		return a
	}
	return b
}
