package strategyworker

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/strategy"
)

// Counter names of the scope in the domain metadata store (Deps.Domains).
const (
	// counterSeedHosts and counterSeedDomains count the seeds of each host name and registered domain: the
	// scope's "seeds' hosts" and "seeds' domains", shared by every worker through the store.
	counterSeedHosts   = "scope_seed_hosts"
	counterSeedDomains = "scope_seed_domains"
	// counterHostPages counts the URLs scheduled for the first time per host (scope.Config.HostBudget, and
	// the strategies' own host budgets: strategy.Common).
	counterHostPages = strategy.CounterHostScheduled
	// counterTemplatePages counts the URLs scheduled for the first time per host and URL template, keyed by
	// scope.TemplateKey (scope.Config.TemplateBudget).
	counterTemplatePages = "scope_template_pages"
)

// seedMissTTL is how long a host's absence from the seeds is trusted before the store is asked again (another
// worker may record a seed of it meanwhile).
const seedMissTTL = 10 * time.Second

// maxSeedKeys bounds the in-memory seed-key caches; past it they start over from the store.
const maxSeedKeys = 1 << 20

// scoper applies the scope to one worker's links and schedules. Only the worker goroutine calls it, except
// the atomic drop counts, which the stats line reads.
type scoper struct {
	f       *scope.Filter
	store   metadata.Domains
	log     *slog.Logger
	known   map[string]bool      // seed keys present in the store
	missing map[string]time.Time // seed keys absent, until when that is trusted
	dropped []atomic.Int64       // by index in scope.Reasons
	m       *metrics
	// keys remembers s.f.Key of the hosts met (at most maxSeedKeys): scope.Domain costs a public-suffix
	// lookup, asked for every link and seed. keyHost and keyOf are the last host asked and its key: a page's
	// links are to one host (the spider splits them per host, and the batch gives them one host string).
	keys           map[string]string
	keyHost, keyOf string
	hasKey         bool
	// seen is prepare's and templateKeys' scratch set, cleared after each use and kept across batches.
	seen map[string]bool
}

// key is s.f.Key(host), remembered.
func (s *scoper) key(host string) string {
	if s.hasKey && host == s.keyHost {
		return s.keyOf
	}
	k, ok := s.keys[host]
	if !ok {
		if len(s.keys) >= maxSeedKeys {
			clear(s.keys)
		}
		k = s.f.Key(host)
		s.keys[host] = k
	}
	s.keyHost, s.keyOf, s.hasKey = host, k, true
	return k
}

func newScoper(cfg scope.Config, store metadata.Domains, m *metrics, log *slog.Logger) (*scoper, error) {
	f, err := scope.New(cfg)
	if err != nil {
		return nil, err
	}
	return &scoper{f: f, store: store, log: log, known: map[string]bool{}, missing: map[string]time.Time{}, keys: map[string]string{}, seen: map[string]bool{},
		dropped: make([]atomic.Int64, len(scope.Reasons)), m: m}, nil
}

func (s *scoper) seedCounter() string {
	if s.f.Config().Follow == scope.FollowHosts {
		return counterSeedHosts
	}
	return counterSeedDomains
}

// prepare reads, in one store call, whether the hosts the batch's links lead to belong to the seeds'
// scope, for the keys not cached.
func (s *scoper) prepare(ctx context.Context, c *batchContext, events []frontier.Message, now time.Time) error {
	if s.f.Config().Follow == scope.FollowAny {
		return nil
	}
	var keys []string
	seen := s.seen
	defer clear(seen)
	for _, e := range events {
		le, ok := e.(*frontier.LinksExtracted)
		if !ok {
			continue
		}
		for _, l := range le.Links {
			k := s.key(c.host(l))
			if k == "" || seen[k] || s.known[k] {
				continue
			}
			seen[k] = true
			if until, ok := s.missing[k]; ok && now.Before(until) {
				continue
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	got, err := s.store.Get(ctx, s.seedCounter(), keys)
	if err != nil {
		return fmt.Errorf("strategyworker: read the seeds' scope: %w", err)
	}
	if len(s.known) > maxSeedKeys {
		clear(s.known)
	}
	if len(s.missing) > maxSeedKeys {
		clear(s.missing)
	}
	for i, k := range keys {
		if got[i] > 0 {
			s.known[k] = true
			delete(s.missing, k)
		} else {
			s.missing[k] = now.Add(seedMissTTL)
		}
	}
	return nil
}

// seeds records the seeds' hosts or domains as in scope, here and (at the batch's end) in the store.
func (s *scoper) seeds(c *batchContext, seeds []*frontier.Request) {
	for _, r := range seeds {
		k := s.key(c.host(r)) // c.host is r.Hostname(), worked out for the batch already
		if k == "" {
			continue
		}
		s.known[k] = true
		delete(s.missing, k)
		c.Add(s.seedCounter(), k, 1)
	}
}

// links drops the links of page that are out of scope or caught by a trap rule, counting each by reason, and
// returns the others (in a new slice when any is dropped).
func (s *scoper) links(c *batchContext, page *frontier.Request, links []*frontier.Request) []*frontier.Request {
	parent, _ := page.MetaDepth()
	var keep []*frontier.Request
	for i, l := range links {
		reason := s.check(c, l, parent, c.host(l))
		if reason == "" {
			if keep != nil {
				keep = append(keep, l)
			}
			continue
		}
		if keep == nil {
			keep = append(make([]*frontier.Request, 0, len(links)), links[:i]...)
		}
		s.drop(reason, l.URL)
	}
	if keep == nil {
		return links
	}
	return keep
}

// check returns why l (a link of a page at depth parent, or a redirect target, of host host) is dropped, or "".
// The URL is parsed once per batch (batchContext.parsed): the template budget and Schedule read it too.
func (s *scoper) check(c *batchContext, l *frontier.Request, parent int64, host string) string {
	if reason := s.f.CheckURL(l.URL, c.parsed(l).u); reason != "" && (reason != scope.ReasonExtension || !isSitemap(l)) {
		return reason // a sitemap is fetched whatever its extension (sitemap.xml.gz)
	}
	depth := parent + 1
	if isRedirectTarget(l) {
		depth, _ = l.MetaDepth() // the spider gave it the depth of the URL that redirected
	}
	if reason := s.f.CheckDepth(depth); reason != "" {
		return reason
	}
	if k := s.key(host); k != "" && !s.known[k] {
		return scope.ReasonOutOfScope
	}
	return ""
}

// budget returns why a URL scheduled for the first time is dropped (its host's budget or its path's query
// variants are spent), or "".
func (s *scoper) budget(c *batchContext, r *frontier.Request, u *url.URL) string {
	if b := s.f.Config().HostBudget; b > 0 && c.Count(counterHostPages, c.host(r)) >= b {
		return scope.ReasonHostBudget
	}
	if u != nil && !s.f.QueryVariant(u) {
		return scope.ReasonQueryVariants
	}
	if b := s.f.Config().TemplateBudget; b > 0 && u != nil {
		if k, ok := c.templateKey(r); ok && c.Count(counterTemplatePages, k) >= b {
			return scope.ReasonTemplateBudget
		}
	}
	return ""
}

// templateKeys lists the template-budget keys of the batch's links not seen before, for one store read before
// the batch (nil when the budget is off). A key it leaves out that Schedule asks for after all (a dont_filter
// link) is read alone then (counters.get).
func (s *scoper) templateKeys(c *batchContext, events []frontier.Message) []string {
	if s.f.Config().TemplateBudget == 0 {
		return nil
	}
	seen := s.seen
	defer clear(seen)
	var keys []string
	for _, e := range events {
		le, ok := e.(*frontier.LinksExtracted)
		if !ok {
			continue
		}
		for _, l := range le.Links {
			if !l.DontFilter() && c.loadedState(l) != frontier.NotCrawled {
				continue // seen before: never counted against a budget (Schedule checks first-time URLs only)
			}
			k, ok := c.templateKey(l)
			if !ok {
				continue
			}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// scheduled counts a URL scheduled for the first time against its host's budget and its path's variants.
func (s *scoper) scheduled(c *batchContext, r *frontier.Request, u *url.URL) {
	c.Add(counterHostPages, c.host(r), 1) // always: the strategies' host budgets read it too
	if u != nil {
		s.f.AddVariant(u)
		if s.f.Config().TemplateBudget > 0 {
			if k, ok := c.templateKey(r); ok {
				c.Add(counterTemplatePages, k, 1)
			}
		}
	}
}

func (s *scoper) drop(reason, rawURL string) {
	if i := slices.Index(scope.Reasons, reason); i >= 0 {
		s.dropped[i].Add(1)
	}
	s.m.dropped.WithLabelValues(reason).Inc()
	s.log.Debug("URL dropped", "url", rawURL, "reason", reason)
}

// droppedCounts returns the drops so far by reason (the reasons with none left out), for the stats line.
func (s *scoper) droppedCounts() []any {
	var out []any
	for i, r := range scope.Reasons {
		if n := s.dropped[i].Load(); n > 0 {
			out = append(out, "dropped_"+r, n)
		}
	}
	return out
}

// metaSitemap marks a sitemap request (spider.MetaKeySitemap).
const metaSitemap = "frontier_sitemap"

// isSitemap reports whether r is a sitemap the spider will parse (meta spider.MetaKeySitemap).
func isSitemap(r *frontier.Request) bool {
	_, ok := r.Meta.Get(metaSitemap)
	return ok
}
