package shortpath

import (
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy/strategytest"
)

func TestShortPathsFirst(t *testing.T) {
	s, err := New(map[string]any{"max_segments": 2})
	if err != nil {
		t.Fatal(err)
	}
	c := strategytest.New(map[string]frontier.State{"http://a/seen": frontier.Crawled})
	s.LinksExtracted(c, nil, []*frontier.Request{{URL: "http://a/x/y"}, {URL: "http://a/"}, {URL: "http://a/x"},
		{URL: "http://a/x/y/z"}, {URL: "http://a/seen"}})
	want := map[string]float64{"http://a/": 1, "http://a/x": 1 / 2.1, "http://a/x/y": 1 / 3.3}
	if len(c.Scheduled) != len(want) {
		t.Fatalf("scheduled %+v", c.Scheduled)
	}
	for _, sc := range c.Scheduled {
		if sc.Score != want[sc.URL] {
			t.Errorf("%s: score %v, want %v", sc.URL, sc.Score, want[sc.URL])
		}
	}
	if _, err := New(map[string]any{"segments": 2}); err == nil {
		t.Error("an unknown option was accepted")
	}
}
