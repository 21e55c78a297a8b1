package depth

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
	"github.com/frontiercrawl/frontier/strategy/strategytest"
)

func req(url string, depth int64) *frontier.Request {
	r := &frontier.Request{URL: url}
	if depth >= 0 {
		r.SetMetaDepth(depth)
	}
	return r
}

func TestDepthStrategies(t *testing.T) {
	known := map[string]frontier.State{"http://a/seen": frontier.Crawled, "http://a/queued": frontier.Queued}
	for _, tc := range []struct {
		name  string
		order Order
		opts  Options
		want  []strategytest.Scheduled
	}{
		{"bfs", BFS, Options{}, []strategytest.Scheduled{
			{URL: "http://a/", Score: 1, Depth: 0},
			{URL: "http://a/new1", Score: 1.0 / 3, Depth: 2},
			{URL: "http://a/new2", Score: 1.0 / 3, Depth: 2},
		}},
		{"dfs", DFS, Options{}, []strategytest.Scheduled{
			{URL: "http://a/", Score: 1, Depth: 0},
			{URL: "http://a/new1", Score: 2.0 / 3, Depth: 2},
			{URL: "http://a/new2", Score: 2.0 / 3, Depth: 2},
		}},
		{"bfs max_depth 1", BFS, Options{MaxDepth: 1}, []strategytest.Scheduled{
			{URL: "http://a/", Score: 1, Depth: 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.order, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			c := strategytest.New(cloneStates(known))
			s.Seeds(c, []*frontier.Request{req("http://a/", -1), req("http://a/seen", -1)})
			s.LinksExtracted(c, req("http://a/p", 1), []*frontier.Request{
				req("http://a/new1", -1), req("http://a/seen", -1), req("http://a/queued", -1), req("http://a/new2", -1)})
			if diff := cmp.Diff(tc.want, c.Scheduled); diff != "" {
				t.Errorf("scheduled (-want +got):\n%s", diff)
			}
			for _, w := range tc.want {
				if c.States[w.URL] != frontier.Queued {
					t.Errorf("%s: state %v after scheduling, want QUEUED", w.URL, c.States[w.URL])
				}
			}
			if c.States["http://a/seen"] != frontier.Crawled {
				t.Error("a crawled URL changed state")
			}
			s.PageCrawled(c, &frontier.Response{URL: "http://a/", Request: req("http://a/", 0)})
			s.RequestError(c, req("http://a/new1", 2), "DNSLookupError")
			if c.States["http://a/"] != frontier.Crawled || c.States["http://a/new1"] != frontier.Error {
				t.Errorf("states after outcomes: %v", c.States)
			}
		})
	}
}

func TestFactories(t *testing.T) {
	if _, err := strategy.New("bfs", map[string]any{"max_depth": 2}); err != nil {
		t.Error(err)
	}
	if _, err := strategy.New("dfs", map[string]any{"max_depth": -1}); err == nil {
		t.Error("negative max_depth accepted")
	}
	if _, err := strategy.New("bfs", map[string]any{"depth": 2}); err == nil {
		t.Error("unknown option accepted")
	}
}

func cloneStates(m map[string]frontier.State) map[string]frontier.State {
	out := make(map[string]frontier.State, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
