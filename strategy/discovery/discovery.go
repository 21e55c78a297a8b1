// Package discovery is the "discovery" strategy: explore many domains shallowly before going deep into any,
// as Frontera's Discovery meant to (a page budget per registrable domain, home pages first), so that a crawl
// from a large seed list, or one that finds new domains as it goes, reaches every domain early.
//
// # Scores
//
// Depth is counted within a registrable domain: a seed, and the home page of a domain a link reveals, are at
// depth 0; a page linked from depth d of the same domain is at d+1; a page linked from another domain is at 1.
// The score puts depth first and domain novelty second:
//
//	score = (levels − 1 − min(depth, levels−1) + novelty) / levels,  novelty = 1 / (1 + pages/novelty_scale)
//
// where pages is how many URLs the domain has had scheduled so far. Every depth owns a band of width
// 1/levels, so no page at depth d+1 outranks one at depth d (the queue hands out the best scores first);
// inside a band, pages of domains that have had little get ahead of pages of domains that had much.
//
// # Budgets and domains
//
// Each registrable domain (www.a.com and blog.a.com count as a.com) may have max_pages URLs scheduled; the
// count lives in the domain metadata store (counter "discovery_pages"), so a restart keeps it. A link to a
// domain never seen schedules that domain's home page (http(s)://host/) at depth 0 before the link itself.
// A DNS failure on a domain's home page marks the domain dead (counter "discovery_dead"): its links are
// dropped from then on. Pages already seen are left alone (the URL-seen test); a fetched page becomes
// CRAWLED, a failed one ERROR.
//
// # Options
//
//	max_pages      int   per registrable domain, default 100; 0 = no budget
//	max_depth      int   deepest page followed within a domain, default 0 = no limit
//	novelty_scale  int   pages after which a domain's novelty halves, default 10
//	levels         int   depth bands of the score, default 10 (depths past levels-1 share the last band)
//	follow_foreign bool  follow links to other domains (their home page first), default true
//
// The options every strategy takes (budgets per host, priorities, seed scores: strategy.Common) apply too.
// The worker's scope decides which links reach the strategy: by default those within the seeds' registered
// domains, so follow_foreign matters once scope.follow is "any".
package discovery

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
)

func init() { strategy.Register("discovery", strategy.OptionsFactory(DefaultOptions, New)) }

// Counter names in the domain metadata store.
const (
	CounterPages = "discovery_pages"
	CounterDead  = "discovery_dead"
)

// Options configure the strategy; see the package doc.
type Options struct {
	MaxPages      int64 `mapstructure:"max_pages"`
	MaxDepth      int64 `mapstructure:"max_depth"`
	NoveltyScale  int64 `mapstructure:"novelty_scale"`
	Levels        int64 `mapstructure:"levels"`
	FollowForeign bool  `mapstructure:"follow_foreign"`
}

// DefaultOptions returns the defaults of the package doc.
func DefaultOptions() Options {
	return Options{MaxPages: 100, NoveltyScale: 10, Levels: 10, FollowForeign: true}
}

// Validate reports every invalid value.
func (o Options) Validate() error {
	var errs []error
	if o.MaxPages < 0 {
		errs = append(errs, fmt.Errorf("max_pages = %d, want >= 0", o.MaxPages))
	}
	if o.MaxDepth < 0 {
		errs = append(errs, fmt.Errorf("max_depth = %d, want >= 0", o.MaxDepth))
	}
	if o.NoveltyScale <= 0 {
		errs = append(errs, fmt.Errorf("novelty_scale = %d, want > 0", o.NoveltyScale))
	}
	if o.Levels < 2 || o.Levels > 1000 {
		errs = append(errs, fmt.Errorf("levels = %d, want 2..1000", o.Levels))
	}
	return errors.Join(errs...)
}

// Strategy is the discovery strategy. It keeps no state of its own: the counters are the Context's.
type Strategy struct{ o Options }

// New returns the strategy.
func New(o Options) (*Strategy, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Strategy{o: o}, nil
}

// Score is the score of a page at depth (within its domain) of a domain that has had pages scheduled.
func (s *Strategy) Score(depth, pages int64) float64 {
	band := s.o.Levels - 1 - min(max(depth, 0), s.o.Levels-1)
	novelty := 1 / (1 + float64(max(pages, 0))/float64(s.o.NoveltyScale))
	return min((float64(band)+novelty)/float64(s.o.Levels), 1)
}

// Seeds schedules every seed at depth 0.
func (s *Strategy) Seeds(c strategy.Context, seeds []*frontier.Request) {
	for _, r := range seeds {
		s.schedule(c, r, strategy.Domain(r.Hostname()), 0)
	}
}

// LinksExtracted schedules the links of the page's domain one level down, and reveals other domains by their
// home pages.
func (s *Strategy) LinksExtracted(c strategy.Context, req *frontier.Request, links []*frontier.Request) {
	parentDomain := strategy.Domain(req.Hostname())
	parent, _ := req.MetaDepth()
	for _, l := range links {
		d := strategy.Domain(l.Hostname())
		if d == "" || c.Count(CounterDead, d) > 0 {
			continue
		}
		depth := parent + 1
		if d != parentDomain {
			if !s.o.FollowForeign {
				continue
			}
			if c.Count(CounterPages, d) == 0 {
				if home := homePage(l); home != nil && home.URL != l.URL {
					s.schedule(c, home, d, 0)
				} else if home != nil {
					depth = 0
				}
			}
			if depth != 0 {
				depth = 1
			}
		}
		if s.o.MaxDepth > 0 && depth > s.o.MaxDepth {
			continue
		}
		s.schedule(c, l, d, depth)
	}
}

// schedule queues r at depth if it was never seen and its domain's budget allows.
func (s *Strategy) schedule(c strategy.Context, r *frontier.Request, domain string, depth int64) {
	if c.State(r) != frontier.NotCrawled {
		return
	}
	pages := c.Count(CounterPages, domain)
	if s.o.MaxPages > 0 && pages >= s.o.MaxPages {
		return
	}
	r.SetMetaDepth(depth)
	if c.Schedule(r, s.Score(depth, pages)) == nil {
		c.SetState(r, frontier.Queued)
		c.Add(CounterPages, domain, 1)
	}
}

// homePage returns the request for the root of l's host, or nil when l's URL does not parse.
func homePage(l *frontier.Request) *frontier.Request {
	u, err := url.Parse(l.URL)
	if err != nil || u.Host == "" {
		return nil
	}
	home := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).String()
	return &frontier.Request{URL: home, Method: "GET"}
}

// PageCrawled marks the page CRAWLED.
func (s *Strategy) PageCrawled(c strategy.Context, resp *frontier.Response) {
	c.SetState(resp.Request, frontier.Crawled)
}

// RequestError marks the request ERROR; a DNS failure at a domain's depth 0 marks the domain dead.
func (s *Strategy) RequestError(c strategy.Context, req *frontier.Request, errName string) {
	c.SetState(req, frontier.Error)
	if d, _ := req.MetaDepth(); d == 0 && errName == "DNSLookupError" {
		if dom := strategy.Domain(req.Hostname()); c.Count(CounterDead, dom) == 0 {
			c.Add(CounterDead, dom, 1)
		}
	}
}
