// Package strategytest provides an in-memory strategy.Context for strategy tests: states, revisit times and
// counters keyed by URL, the scheduled requests in order, and a settable clock.
package strategytest

import (
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
)

// Scheduled is one Schedule call that was accepted.
type Scheduled struct {
	URL   string
	Score float64
	Depth int64 // meta depth at the time of the call, -1 if absent
	// NotBefore is the request's due time (meta frontier_not_before), 0 if absent.
	NotBefore int64
}

// Context is a strategy.Context over maps keyed by URL. Not safe for concurrent use.
type Context struct {
	States    map[string]frontier.State
	Revisit   map[string]int64
	Counters  map[string]map[string]int64 // counter name → key → value
	Scheduled []Scheduled
	Rejected  []error
	// Clock is what Now returns; the zero time means time.Unix(1e9, 0).
	Clock time.Time
	// Requests are the scheduled requests themselves, parallel to Scheduled.
	Requests []*frontier.Request
}

var _ strategy.Context = (*Context)(nil)

// New returns a Context with the given initial states.
func New(states map[string]frontier.State) *Context {
	if states == nil {
		states = map[string]frontier.State{}
	}
	return &Context{States: states, Revisit: map[string]int64{}, Counters: map[string]map[string]int64{}}
}

// State implements strategy.Context.
func (c *Context) State(r *frontier.Request) frontier.State { return c.States[r.URL] }

// SetState implements strategy.Context.
func (c *Context) SetState(r *frontier.Request, s frontier.State) { c.States[r.URL] = s }

// RevisitAt implements strategy.Context.
func (c *Context) RevisitAt(r *frontier.Request) int64 { return c.Revisit[r.URL] }

// SetRevisitAt implements strategy.Context.
func (c *Context) SetRevisitAt(r *frontier.Request, unix int64) { c.Revisit[r.URL] = unix }

// Count implements strategy.Context.
func (c *Context) Count(name, key string) int64 { return c.Counters[name][key] }

// Add implements strategy.Context.
func (c *Context) Add(name, key string, delta int64) int64 {
	m := c.Counters[name]
	if m == nil {
		m = map[string]int64{}
		c.Counters[name] = m
	}
	m[key] += delta
	return m[key]
}

// Now implements strategy.Context.
func (c *Context) Now() time.Time {
	if c.Clock.IsZero() {
		return time.Unix(1e9, 0)
	}
	return c.Clock
}

// Schedule implements strategy.Context.
func (c *Context) Schedule(r *frontier.Request, score float64) error {
	if err := strategy.CheckScore(score); err != nil {
		c.Rejected = append(c.Rejected, err)
		return err
	}
	d, err := r.MetaDepth()
	if err != nil {
		d = -1
	}
	if c.State(r) == frontier.NotCrawled {
		c.Add(strategy.CounterHostScheduled, r.Hostname(), 1) // as the strategy worker counts it (it leaves seeds out)
	}
	nb, _ := r.MetaNotBefore()
	c.Scheduled = append(c.Scheduled, Scheduled{URL: r.URL, Score: score, Depth: d, NotBefore: nb})
	c.Requests = append(c.Requests, r)
	return nil
}

// URLs returns the URLs scheduled, in order.
func (c *Context) URLs() []string {
	out := make([]string, len(c.Scheduled))
	for i, s := range c.Scheduled {
		out[i] = s.URL
	}
	return out
}
