// Package strategytest provides an in-memory strategy.Context for strategy tests: states keyed by URL, and
// the scheduled requests in order.
package strategytest

import (
	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
)

// Scheduled is one Schedule call that was accepted.
type Scheduled struct {
	URL   string
	Score float64
	Depth int64 // meta depth at the time of the call, -1 if absent
}

// Context is a strategy.Context over a map of URL → state. Not safe for concurrent use.
type Context struct {
	States    map[string]frontier.State
	Scheduled []Scheduled
	Rejected  []error
}

// New returns a Context with the given initial states.
func New(states map[string]frontier.State) *Context {
	if states == nil {
		states = map[string]frontier.State{}
	}
	return &Context{States: states}
}

// State implements strategy.Context.
func (c *Context) State(r *frontier.Request) frontier.State { return c.States[r.URL] }

// SetState implements strategy.Context.
func (c *Context) SetState(r *frontier.Request, s frontier.State) { c.States[r.URL] = s }

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
	c.Scheduled = append(c.Scheduled, Scheduled{URL: r.URL, Score: score, Depth: d})
	return nil
}
