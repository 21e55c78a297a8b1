package discovery

import (
	"fmt"
	"sort"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
	"github.com/frontiercrawl/frontier/strategy/strategytest"
)

func at(url string, depth int64) *frontier.Request {
	r := &frontier.Request{URL: url}
	if depth >= 0 {
		r.SetMetaDepth(depth)
	}
	return r
}

func links(urls ...string) []*frontier.Request {
	out := make([]*frontier.Request, len(urls))
	for i, u := range urls {
		out[i] = at(u, -1)
	}
	return out
}

// TestScoreOrder: every page at depth d outranks every page at depth d+1, whatever the domains had; within a
// depth, a domain that had fewer pages goes first.
func TestScoreOrder(t *testing.T) {
	s, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for d := range int64(12) {
		for _, pages := range []int64{0, 1, 10, 1000, 1 << 40} {
			sc := s.Score(d, pages)
			if err := strategy.CheckScore(sc); err != nil {
				t.Fatalf("Score(%d, %d): %v", d, pages, err)
			}
			if d < 9 && sc <= s.Score(d+1, 0) {
				t.Errorf("Score(%d, %d) = %v does not outrank Score(%d, 0) = %v", d, pages, sc, d+1, s.Score(d+1, 0))
			}
			if pages > 0 && sc >= s.Score(d, pages/2) {
				t.Errorf("Score(%d, %d) = %v >= Score(%d, %d)", d, pages, sc, d, pages/2)
			}
		}
	}
	if s.Score(0, 0) != 1 {
		t.Errorf("a new domain's home page scores %v, want 1", s.Score(0, 0))
	}
}

func TestDiscovery(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		// the events: seeds, then the links of http://a.com/ (depth 0)
		seeds []string
		links []string
		known map[string]frontier.State
		want  []string // scheduled URL@depth, in order
	}{
		{
			name:  "seeds at depth 0, same-domain links at 1",
			opts:  DefaultOptions(),
			seeds: []string{"http://a.com/", "http://b.com/x"},
			links: []string{"http://a.com/1", "http://www.a.com/2"},
			want:  []string{"http://a.com/@0", "http://b.com/x@0", "http://a.com/1@1", "http://www.a.com/2@1"},
		},
		{
			name:  "a new domain's home page goes first, its page at 1",
			opts:  DefaultOptions(),
			seeds: []string{"http://a.com/"},
			links: []string{"http://c.org/deep/page", "http://c.org/other", "http://d.net/"},
			want:  []string{"http://a.com/@0", "http://c.org/@0", "http://c.org/deep/page@1", "http://c.org/other@1", "http://d.net/@0"},
		},
		{
			name:  "foreign links not followed",
			opts:  Options{MaxPages: 100, NoveltyScale: 10, Levels: 10},
			seeds: []string{"http://a.com/"},
			links: []string{"http://c.org/x", "http://a.com/y"},
			want:  []string{"http://a.com/@0", "http://a.com/y@1"},
		},
		{
			name:  "budget of 3 pages per registrable domain",
			opts:  Options{MaxPages: 3, NoveltyScale: 10, Levels: 10, FollowForeign: true},
			seeds: []string{"http://a.com/"},
			links: []string{"http://a.com/1", "http://blog.a.com/2", "http://a.com/3", "http://a.com/4"},
			want:  []string{"http://a.com/@0", "http://a.com/1@1", "http://blog.a.com/2@1"},
		},
		{
			name:  "seen URLs left alone",
			opts:  DefaultOptions(),
			seeds: []string{"http://a.com/"},
			links: []string{"http://a.com/old", "http://c.org/x"},
			known: map[string]frontier.State{"http://a.com/old": frontier.Crawled, "http://c.org/": frontier.Crawled},
			want:  []string{"http://a.com/@0", "http://c.org/x@1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			c := strategytest.New(tc.known)
			s.Seeds(c, links(tc.seeds...))
			s.LinksExtracted(c, at("http://a.com/", 0), links(tc.links...))
			var got []string
			for _, x := range c.Scheduled {
				got = append(got, fmt.Sprintf("%s@%d", x.URL, x.Depth))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("scheduled %v\nwant      %v", got, tc.want)
			}
			for _, u := range tc.want {
				u = u[:len(u)-2]
				if c.States[u] != frontier.Queued {
					t.Errorf("%s: state %v, want QUEUED", u, c.States[u])
				}
			}
		})
	}
}

// TestShallowAcrossDomainsFirst replays a crawl: many domains, each page linking deeper pages of its own
// domain, the queue handing out the best score first. Every domain's home page and depth-1 pages are fetched
// before any depth-2 page.
func TestShallowAcrossDomainsFirst(t *testing.T) {
	s, _ := New(DefaultOptions())
	c := strategytest.New(nil)
	var seeds []*frontier.Request
	for d := range 30 {
		seeds = append(seeds, at(fmt.Sprintf("http://d%d.com/", d), -1))
	}
	s.Seeds(c, seeds[:1]) // the seeds arrive in two batches, one domain first
	type item struct {
		r     *frontier.Request
		score float64
	}
	var queue []item
	taken := 0
	pull := func() {
		for ; taken < len(c.Scheduled); taken++ {
			queue = append(queue, item{c.Requests[taken], c.Scheduled[taken].Score})
		}
		sort.SliceStable(queue, func(i, j int) bool { return queue[i].score > queue[j].score })
	}
	pull()
	var fetched []int64
	for n := 0; len(queue) > 0 && n < 5000; n++ {
		if n == 3 {
			s.Seeds(c, seeds[1:])
		}
		pull()
		r := queue[0].r
		queue = queue[1:]
		d, _ := r.MetaDepth()
		fetched = append(fetched, d)
		s.PageCrawled(c, &frontier.Response{URL: r.URL, Status: 200, Request: r})
		var ls []*frontier.Request
		for k := range 3 {
			ls = append(ls, at(fmt.Sprintf("%s%d/%d", r.URL, d, k), -1))
		}
		s.LinksExtracted(c, r, ls)
		pull()
	}
	deepest := int64(0)
	for i, d := range fetched[3:] { // once every seed is in, depths never go back up
		if d < deepest {
			t.Fatalf("fetch %d is at depth %d after a fetch at depth %d: %v", i+3, d, deepest, fetched[:i+4])
		}
		deepest = max(deepest, d)
	}
	for d := range 30 {
		if n := c.Count(CounterPages, fmt.Sprintf("d%d.com", d)); n != 100 {
			t.Errorf("d%d.com: %d pages scheduled, want the budget of 100", d, n)
		}
	}
}

func TestDeadDomain(t *testing.T) {
	s, _ := New(DefaultOptions())
	c := strategytest.New(nil)
	s.RequestError(c, at("http://gone.com/", 0), "DNSLookupError")
	s.RequestError(c, at("http://flaky.com/", 0), "TimeoutError")
	s.LinksExtracted(c, at("http://a.com/", 0), links("http://gone.com/x", "http://www.gone.com/", "http://flaky.com/y"))
	if got := fmt.Sprint(c.URLs()); got != "[http://flaky.com/y]" {
		t.Errorf("scheduled %v, want only the flaky domain's page (its home page failed: it is known)", got)
	}
}

func TestFactory(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]any
		ok   bool
	}{
		{nil, true},
		{map[string]any{"max_pages": 5, "max_depth": 3, "follow_foreign": false, "domain_budget": 10}, true},
		{map[string]any{"max_pages": -1}, false},
		{map[string]any{"levels": 1}, false},
		{map[string]any{"novelty_scale": 0}, false},
		{map[string]any{"budget": 3}, false},
	} {
		if _, err := strategy.New("discovery", tc.opts); (err == nil) != tc.ok {
			t.Errorf("%v: err = %v, want ok = %v", tc.opts, err, tc.ok)
		}
	}
}

func TestMaxDepth(t *testing.T) {
	o := DefaultOptions()
	o.MaxDepth = 1
	s, _ := New(o)
	c := strategytest.New(nil)
	s.LinksExtracted(c, at("http://a.com/1", 1), links("http://a.com/2", "http://c.org/x"))
	if got := fmt.Sprint(c.URLs()); got != "[http://c.org/ http://c.org/x]" {
		t.Errorf("scheduled %v: want the depth-2 page dropped, the foreign domain kept (its depth starts over)", got)
	}
}
