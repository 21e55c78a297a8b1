package strategyworker

import (
	"context"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/scope"
	"github.com/frontiercrawl/frontier/state"
)

func redirectLink(u, from string, depth int64, score float64) *frontier.Request {
	r := req(u, depth)
	r.Meta.Set(metaRedirectURLs, []frontier.Value{from})
	r.Meta.Set(metaRedirectTimes, int64(1))
	r.SetMetaScore(score)
	return r
}

// TestRedirectTargetsGoThroughTheURLSeenTest: a redirect target already crawled, queued or in error is not
// scheduled again; a new one is, at the redirecting request's depth and score, even past the strategy's
// max_depth (a redirect does not make a page deeper); ordinary links still go to the strategy.
func TestRedirectTargetsGoThroughTheURLSeenTest(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for u, st := range map[string]frontier.State{"http://a/crawled": frontier.Crawled, "http://a/queued": frontier.Queued, "http://a/error": frontier.Error} {
		if err := r.states.Put(ctx, []frontier.Fingerprint{sha(u)}, []state.Entry{{State: st}}); err != nil {
			t.Fatal(err)
		}
	}
	page := req("http://a/old", 1)
	r.publish(t,
		&frontier.LinksExtracted{Request: page, Links: []*frontier.Request{
			redirectLink("http://a/crawled", "http://a/old", 1, 0.5),
			redirectLink("http://a/queued", "http://a/old", 1, 0.5),
			redirectLink("http://a/error", "http://a/old", 1, 0.5),
			redirectLink("http://a/new", "http://a/old", 1, 0.5),
			req("http://a/link", -1),
		}},
		&frontier.LinksExtracted{Request: req("http://a/other", 1), Links: []*frontier.Request{
			redirectLink("http://a/new", "http://a/other", 1, 0.5), // the same target, found again
		}},
	)
	cfg := DefaultConfig()
	cfg.Options = map[string]any{"max_depth": 1}
	cfg.Scope.Follow = scope.FollowAny // links of a depth-1 page are too deep; redirect targets are not
	r.cfg = &cfg
	r.runUntilIdle(t)
	got := r.scores(t)
	if len(got) != 1 || got[0].Request.URL != "http://a/new" || got[0].Score != 0.5 {
		for _, us := range got {
			t.Logf("scheduled %s %v", us.Request.URL, us.Score)
		}
		t.Fatalf("%d scheduled, want only http://a/new with score 0.5", len(got))
	}
	if d, _ := got[0].Request.MetaDepth(); d != 1 {
		t.Errorf("redirect target depth %d, want 1", d)
	}
	e := make([]state.Entry, 1)
	found := make([]bool, 1)
	if err := r.states.Get(ctx, []frontier.Fingerprint{sha("http://a/new")}, e, found); err != nil || e[0].State != frontier.Queued {
		t.Errorf("state of the new target %v (%v), want QUEUED", e[0].State, err)
	}
}
