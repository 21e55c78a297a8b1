// Package basic is Frontera's BasicCrawlingStrategy, registered as "basic": every seed and every link never
// seen before is queued with score 1 (so the queue is first come, first served within a host), a fetched page
// becomes CRAWLED and a failed request ERROR. It takes no options.
package basic

import (
	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
)

func init() {
	strategy.Register("basic", func(opts map[string]any) (strategy.Strategy, error) {
		if err := strategy.DecodeOptions(opts, &struct{}{}); err != nil {
			return nil, err
		}
		return Strategy{}, nil
	})
}

// Strategy is the basic strategy. It keeps no state.
type Strategy struct{}

func queue(c strategy.Context, reqs []*frontier.Request) {
	for _, r := range reqs {
		if c.State(r) == frontier.NotCrawled && c.Schedule(r, 1) == nil {
			c.SetState(r, frontier.Queued)
		}
	}
}

// Seeds queues the seeds never seen before.
func (Strategy) Seeds(c strategy.Context, seeds []*frontier.Request) { queue(c, seeds) }

// LinksExtracted queues the links never seen before.
func (Strategy) LinksExtracted(c strategy.Context, _ *frontier.Request, links []*frontier.Request) {
	queue(c, links)
}

// PageCrawled marks the page CRAWLED.
func (Strategy) PageCrawled(c strategy.Context, resp *frontier.Response) {
	c.SetState(resp.Request, frontier.Crawled)
}

// RequestError marks the request ERROR.
func (Strategy) RequestError(c strategy.Context, req *frontier.Request, _ string) {
	c.SetState(req, frontier.Error)
}
