// Package shortpath is an example of a crawl strategy written outside the Frontier module: it fetches the
// URLs with the shortest paths first (Frontera 0.7's "bfs" did this: a site's top pages tend to have short
// paths), and never follows a URL with more than max_segments path segments.
//
// A strategy is four methods over a strategy.Context (see package strategy); the worker reads and writes the
// crawl state for it. Register makes it available by name, as strategy_worker.strategy: shortpath.
package shortpath

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
)

// Name is the name the strategy registers under.
const Name = "shortpath"

// Options are the strategy's own options (strategy_worker.options); the common ones (host_budget,
// domain_budget, host_priority, ...) are handled by Frontier around every strategy.
type Options struct {
	MaxSegments int `mapstructure:"max_segments"`
}

// Register adds the strategy to the default registry. Call it from main before launch.Main.
func Register() { strategy.Register(Name, New) }

// New is the strategy's factory: it decodes its options strictly (an unknown option is an error).
func New(opts map[string]any) (strategy.Strategy, error) {
	o := Options{MaxSegments: 8}
	if err := strategy.DecodeOptions(opts, &o); err != nil {
		return nil, err
	}
	if o.MaxSegments < 1 {
		return nil, fmt.Errorf("max_segments = %d, want >= 1", o.MaxSegments)
	}
	return &Strategy{o: o}, nil
}

// Strategy is the shortpath strategy.
type Strategy struct{ o Options }

// Score is 1 / (1 + segments + 0.1·len(path)): in (0, 1], shorter paths first.
func Score(rawURL string) (score float64, segments int) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, 0
	}
	p := strings.Trim(u.EscapedPath(), "/")
	if p != "" {
		segments = strings.Count(p, "/") + 1
	}
	return 1 / (1 + float64(segments) + 0.1*float64(len(p))), segments
}

func (s *Strategy) queue(c strategy.Context, reqs []*frontier.Request) {
	for _, r := range reqs {
		if c.State(r) != frontier.NotCrawled {
			continue // the URL-seen test: queued, crawled or failed before
		}
		score, segments := Score(r.URL)
		if segments > s.o.MaxSegments {
			continue
		}
		if c.Schedule(r, score) == nil {
			c.SetState(r, frontier.Queued)
		}
	}
}

// Seeds queues the seeds.
func (s *Strategy) Seeds(c strategy.Context, seeds []*frontier.Request) { s.queue(c, seeds) }

// LinksExtracted queues the page's new links.
func (s *Strategy) LinksExtracted(c strategy.Context, _ *frontier.Request, links []*frontier.Request) {
	s.queue(c, links)
}

// PageCrawled marks the page crawled.
func (s *Strategy) PageCrawled(c strategy.Context, resp *frontier.Response) {
	c.SetState(resp.Request, frontier.Crawled)
}

// RequestError marks the request failed.
func (s *Strategy) RequestError(c strategy.Context, req *frontier.Request, _ string) {
	c.SetState(req, frontier.Error)
}
