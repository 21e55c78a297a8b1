package strategy

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/frontiercrawl/frontier"
)

// Common are the options every strategy takes besides its own: page budgets per host and per registrable
// domain, per-host priorities, and the seed file's scores. Registry.New takes them out of the options map
// before the strategy's factory sees the rest, and wraps the strategy when any is set.
//
// A budget counts the URLs a strategy schedules for the first time (state NOT_CRAWLED); a URL over budget is
// not scheduled and stays NOT_CRAWLED, so a larger budget after a restart picks it up when it is linked again.
// Re-scheduling a URL already seen (a revisit) costs nothing. Counters are persisted (Context.Count). The
// per-host count is the one the strategy worker keeps for the crawl-wide scope.host_budget (a trap defence,
// package scope): HostBudget and HostBudgets set tighter limits per strategy and per host on the same count,
// which does not include the seeds.
type Common struct {
	// HostBudget is the most URLs scheduled per host name; 0 = no budget.
	HostBudget int64 `mapstructure:"host_budget"`
	// DomainBudget is the most URLs scheduled per registrable domain (www.a.com and blog.a.com share a.com's
	// budget); 0 = no budget.
	DomainBudget int64 `mapstructure:"domain_budget"`
	// HostBudgets overrides HostBudget for the hosts named (host → budget; 0 = no budget for that host).
	HostBudgets map[string]int64 `mapstructure:"host_budgets"`
	// HostPriority multiplies the score of every URL of a host or registrable domain (the host's own entry
	// wins) by a factor >= 0; the product is capped at 1. 0 drops the host's URLs; 2 doubles their scores.
	HostPriority map[string]float64 `mapstructure:"host_priority"`
	// SeedScores uses the seed file's score column (frontier.MetaKeyScore on the seed) as the score of a
	// seed, instead of the strategy's. Default true.
	SeedScores *bool `mapstructure:"seed_scores"`
}

// commonKeys are the option names Common decodes.
var commonKeys = []string{"host_budget", "domain_budget", "host_budgets", "host_priority", "seed_scores"}

// Counter names the budgets use (Context.Count). The host count is the strategy worker's own: it counts every
// URL scheduled for the first time outside the seeds, for the scope's host_budget (package scope) as for this
// one, so there is one count per host. The domain count is kept here.
const (
	CounterHostScheduled   = "scope_host_pages"
	CounterDomainScheduled = "domain_scheduled"
)

// ErrBudget is Schedule's error for a URL over its host's or domain's page budget.
var ErrBudget = errors.New("strategy: page budget spent")

// splitCommon moves the common options out of opts.
func splitCommon(opts map[string]any) (Common, map[string]any, error) {
	var c Common
	own := make(map[string]any, len(opts))
	common := map[string]any{}
	for k, v := range opts {
		if isCommonKey(k) {
			common[k] = v
		} else {
			own[k] = v
		}
	}
	if len(common) > 0 {
		if err := DecodeOptions(common, &c); err != nil {
			return c, nil, err
		}
	}
	return c, own, c.Validate()
}

func isCommonKey(k string) bool {
	for _, c := range commonKeys {
		if k == c {
			return true
		}
	}
	return false
}

// Validate reports every invalid value.
func (c Common) Validate() error {
	var errs []error
	if c.HostBudget < 0 || c.DomainBudget < 0 {
		errs = append(errs, fmt.Errorf("host_budget = %d, domain_budget = %d, want >= 0", c.HostBudget, c.DomainBudget))
	}
	for h, b := range c.HostBudgets {
		if b < 0 {
			errs = append(errs, fmt.Errorf("host_budgets[%s] = %d, want >= 0", h, b))
		}
	}
	for h, p := range c.HostPriority {
		if !(p >= 0) || p > 1e9 {
			errs = append(errs, fmt.Errorf("host_priority[%s] = %v, want a factor >= 0", h, p))
		}
	}
	return errors.Join(errs...)
}

func (c Common) active() bool {
	return c.HostBudget > 0 || c.DomainBudget > 0 || len(c.HostBudgets) > 0 || len(c.HostPriority) > 0 ||
		c.SeedScores == nil || *c.SeedScores
}

// Wrap returns s with the common options applied (s itself when none is active). Registry.New calls it;
// a caller that builds a strategy by hand may too.
func Wrap(s Strategy, c Common) Strategy {
	if !c.active() {
		return s
	}
	return &common{inner: s, opts: c}
}

// common applies Common around a strategy by wrapping the Context it sees.
type common struct {
	inner Strategy
	opts  Common
}

// Unwrap returns the wrapped strategy.
func (w *common) Unwrap() Strategy { return w.inner }

// Finished implements Finisher for a strategy that does.
func (w *common) Finished() bool {
	f, ok := w.inner.(Finisher)
	return ok && f.Finished()
}

func (w *common) Seeds(c Context, seeds []*frontier.Request) {
	w.inner.Seeds(&commonContext{Context: c, opts: &w.opts, seeds: w.opts.SeedScores == nil || *w.opts.SeedScores}, seeds)
}

func (w *common) PageCrawled(c Context, resp *frontier.Response) {
	w.inner.PageCrawled(&commonContext{Context: c, opts: &w.opts}, resp)
}

func (w *common) LinksExtracted(c Context, req *frontier.Request, links []*frontier.Request) {
	w.inner.LinksExtracted(&commonContext{Context: c, opts: &w.opts}, req, links)
}

func (w *common) RequestError(c Context, req *frontier.Request, errName string) {
	w.inner.RequestError(&commonContext{Context: c, opts: &w.opts}, req, errName)
}

// commonContext is the Context a wrapped strategy sees: Schedule applies seed scores, priorities and budgets.
type commonContext struct {
	Context
	opts  *Common
	seeds bool // the batch is a seed batch: a seed's own score wins
}

func (c *commonContext) Schedule(r *frontier.Request, score float64) error {
	if c.seeds {
		if s, err := r.MetaScore(); err == nil && CheckScore(s) == nil {
			score = s
		}
	}
	if len(c.opts.HostPriority) == 0 && len(c.opts.HostBudgets) == 0 && c.opts.HostBudget == 0 && c.opts.DomainBudget == 0 {
		return c.Context.Schedule(r, score) // no budget nor priority: the host name is not needed
	}
	host := r.Hostname()
	domain := ""
	if len(c.opts.HostPriority) > 0 {
		f, ok := c.opts.HostPriority[host]
		if !ok {
			domain = Domain(host)
			f, ok = c.opts.HostPriority[domain]
		}
		if ok {
			if f == 0 {
				return fmt.Errorf("%w: host %s has priority 0", ErrBudget, host)
			}
			score = min(score*f, 1)
		}
	}
	hb, ok := c.opts.HostBudgets[host]
	if !ok {
		hb = c.opts.HostBudget
	}
	db := c.opts.DomainBudget
	if (hb == 0 && db == 0) || c.State(r) != frontier.NotCrawled {
		return c.Context.Schedule(r, score)
	}
	if domain == "" && db > 0 {
		domain = Domain(host)
	}
	if hb > 0 && c.Count(CounterHostScheduled, host) >= hb {
		return fmt.Errorf("%w: host %s has %d pages", ErrBudget, host, hb)
	}
	if db > 0 && c.Count(CounterDomainScheduled, domain) >= db {
		return fmt.Errorf("%w: domain %s has %d pages", ErrBudget, domain, db)
	}
	if err := c.Context.Schedule(r, score); err != nil {
		return err
	}
	if db > 0 {
		c.Add(CounterDomainScheduled, domain, 1)
	}
	return nil
}

// Domain returns the registrable domain of a host name (public suffix + 1: www.example.co.uk →
// example.co.uk); an IP address, a bare suffix or a name the list cannot place is its own domain.
func Domain(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || net.ParseIP(host) != nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}
