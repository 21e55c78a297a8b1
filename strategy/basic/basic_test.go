package basic

import (
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
	"github.com/frontiercrawl/frontier/strategy/strategytest"
)

func TestBasic(t *testing.T) {
	s, err := strategy.New("basic", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := strategytest.New(map[string]frontier.State{"http://a/old": frontier.Crawled})
	s.Seeds(c, []*frontier.Request{{URL: "http://a/"}})
	s.LinksExtracted(c, &frontier.Request{URL: "http://a/"}, []*frontier.Request{{URL: "http://a/old"}, {URL: "http://a/x"}})
	if len(c.Scheduled) != 2 || c.Scheduled[0].URL != "http://a/" || c.Scheduled[1].URL != "http://a/x" || c.Scheduled[1].Score != 1 {
		t.Errorf("scheduled %+v", c.Scheduled)
	}
	if _, err := strategy.New("basic", map[string]any{"x": 1}); err == nil {
		t.Error("basic accepted an option")
	}
}
