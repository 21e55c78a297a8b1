// Package depth holds Frontera's depth-ordered strategies (frontera/strategy/depth.py), registered as "bfs"
// (breadth first: score 1/(depth+1)) and "dfs" (depth first: score depth/(depth+1)).
//
// Seeds that were never seen are queued at depth 0 with score 1. A link that was never seen is queued at its
// parent's depth + 1 (the depth travels in meta "depth"); a link deeper than the max_depth option is not
// queued. A fetched page becomes CRAWLED, a failed request ERROR. URLs already QUEUED, CRAWLED or in ERROR
// are left alone: that is the URL-seen test.
//
// Options: max_depth (int, 0 = unlimited).
package depth

import (
	"fmt"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
)

func init() {
	strategy.Register("bfs", func(opts map[string]any) (strategy.Strategy, error) { return fromOptions(opts, BFS) })
	strategy.Register("dfs", func(opts map[string]any) (strategy.Strategy, error) { return fromOptions(opts, DFS) })
}

// Order is the scoring rule of a depth strategy.
type Order int

// The two orders.
const (
	BFS Order = iota // score 1/(depth+1): shallow pages first
	DFS              // score depth/(depth+1): deep pages first
)

// Options configure a depth strategy.
type Options struct {
	MaxDepth int `mapstructure:"max_depth"`
}

// Strategy is a depth-ordered strategy. It keeps no state of its own.
type Strategy struct {
	order Order
	opts  Options
}

func fromOptions(raw map[string]any, order Order) (strategy.Strategy, error) {
	var o Options
	if err := strategy.DecodeOptions(raw, &o); err != nil {
		return nil, err
	}
	return New(order, o)
}

// New returns a depth strategy.
func New(order Order, o Options) (*Strategy, error) {
	if o.MaxDepth < 0 {
		return nil, fmt.Errorf("max_depth = %d, want >= 0", o.MaxDepth)
	}
	return &Strategy{order: order, opts: o}, nil
}

// Score is the score of a request at depth d.
func (s *Strategy) Score(d int64) float64 {
	if s.order == DFS {
		return float64(d) / float64(d+1)
	}
	return 1 / float64(d+1)
}

// Seeds queues the seeds never seen before at depth 0.
func (s *Strategy) Seeds(c strategy.Context, seeds []*frontier.Request) {
	for _, r := range seeds {
		s.queue(c, r, 0, 1)
	}
}

// LinksExtracted queues the links never seen before one level below their page.
func (s *Strategy) LinksExtracted(c strategy.Context, req *frontier.Request, links []*frontier.Request) {
	parent, _ := req.MetaDepth()
	d := parent + 1
	if s.opts.MaxDepth > 0 && d > int64(s.opts.MaxDepth) {
		return
	}
	for _, l := range links {
		s.queue(c, l, d, s.Score(d))
	}
}

func (s *Strategy) queue(c strategy.Context, r *frontier.Request, depth int64, score float64) {
	if c.State(r) != frontier.NotCrawled {
		return
	}
	r.SetMetaDepth(depth)
	if err := c.Schedule(r, score); err == nil {
		c.SetState(r, frontier.Queued)
	}
}

// PageCrawled marks the page CRAWLED.
func (s *Strategy) PageCrawled(c strategy.Context, resp *frontier.Response) {
	c.SetState(resp.Request, frontier.Crawled)
}

// RequestError marks the request ERROR.
func (s *Strategy) RequestError(c strategy.Context, req *frontier.Request, _ string) {
	c.SetState(req, frontier.Error)
}
